/**
 * Splits a thinking model's output into its reasoning and its answer, as it streams: the text
 * of a `<think>…</think>` block that opens the output (or that the prompt already opened) is
 * reasoning, everything after `</think>` is the answer (vLLM's and DeepSeek's
 * `reasoning_content` / `content`). A tag split across pieces is held back until it is whole;
 * the newlines the template writes around the tags ("<think>\n", "\n</think>\n\n") are trimmed.
 * Output that does not open with `<think>` is all answer; a block still open at the end (cut by
 * max_tokens) is all reasoning.
 */

const OPEN = '<think>';
const CLOSE = '</think>';

export interface ReasoningDelta {
  reasoning: string;
  content: string;
}

type Phase = 'start' | 'after-open' | 'reasoning' | 'after-close' | 'content';

export class ReasoningSplitter {
  #phase: Phase;
  /** Text received but not yet assigned (a possible tag prefix, or newlines that may precede `</think>`). */
  #held = '';
  #reasoning = '';
  #content = '';

  /** `opened`: the prompt ends inside a think block (the template wrote `<think>` for the model). */
  constructor(opened = false) {
    this.#phase = opened ? 'after-open' : 'start';
  }

  /** All reasoning emitted so far. */
  get reasoning(): string {
    return this.#reasoning;
  }

  /** All answer text emitted so far. */
  get content(): string {
    return this.#content;
  }

  /** Feeds the next piece of generated text; returns what can be emitted now. */
  push(piece: string): ReasoningDelta {
    const out: ReasoningDelta = { reasoning: '', content: '' };
    let text = this.#held + piece;
    this.#held = '';
    for (;;) {
      switch (this.#phase) {
        case 'start': {
          const lead = text.length - text.trimStart().length;
          const rest = text.slice(lead);
          if (rest.startsWith(OPEN)) {
            text = rest.slice(OPEN.length);
            this.#phase = 'after-open';
            continue;
          }
          if (OPEN.startsWith(rest)) {
            // Only whitespace and a possible "<think" so far: wait.
            this.#held = text;
            return this.#emit(out);
          }
          this.#phase = 'content';
          continue;
        }
        case 'after-open':
        case 'after-close': {
          const stripped = text.replace(/^\n+/, '');
          if (stripped === '') {
            return this.#emit(out);
          }
          text = stripped;
          this.#phase = this.#phase === 'after-open' ? 'reasoning' : 'content';
          continue;
        }
        case 'reasoning': {
          const at = text.indexOf(CLOSE);
          if (at >= 0) {
            out.reasoning += text.slice(0, at).replace(/\n+$/, '');
            text = text.slice(at + CLOSE.length);
            this.#phase = 'after-close';
            continue;
          }
          // Hold back a possible start of "</think>" and the newlines before it.
          let keep = partialSuffix(text, CLOSE);
          const body = text.slice(0, text.length - keep);
          const newlines = body.length - body.replace(/\n+$/, '').length;
          keep += newlines;
          out.reasoning += text.slice(0, text.length - keep);
          this.#held = text.slice(text.length - keep);
          return this.#emit(out);
        }
        case 'content':
          out.content += text;
          return this.#emit(out);
      }
    }
  }

  /** At the end of generation: whatever was held back, where it belongs. */
  flush(): ReasoningDelta {
    const held = this.#held;
    this.#held = '';
    const out: ReasoningDelta = { reasoning: '', content: '' };
    if (this.#phase === 'reasoning') out.reasoning = held;
    else if (this.#phase === 'start') out.content = held;
    return this.#emit(out);
  }

  #emit(out: ReasoningDelta): ReasoningDelta {
    this.#reasoning += out.reasoning;
    this.#content += out.content;
    return out;
  }
}

/** The length of the longest proper prefix of `tag` that `text` ends with. */
function partialSuffix(text: string, tag: string): number {
  for (let k = Math.min(tag.length - 1, text.length); k > 0; k--) {
    if (text.endsWith(tag.slice(0, k))) return k;
  }
  return 0;
}

/** Whether a chat template speaks think blocks (Qwen3, DeepSeek-R1 distills): it mentions `</think>`. */
export function templateThinks(template: string | null): boolean {
  return template !== null && template.includes(CLOSE);
}

/**
 * Whether a rendered prompt leaves a think block open for the model (a template that writes
 * `<think>\n` into the generation prompt): its last `<think>` comes after its last `</think>`.
 */
export function promptOpensThink(prompt: string): boolean {
  const open = prompt.lastIndexOf(OPEN);
  return open >= 0 && open > prompt.lastIndexOf(CLOSE);
}
