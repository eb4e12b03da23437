/**
 * Splits a reply that may call tools into its text and its calls, as it streams (OpenAI's
 * shape: a call's first delta carries its `index`, `id`, `type` and `function.name` with empty
 * `arguments`, the next ones pieces of `arguments`). A call is found by its tags (tool-format.ts):
 * its `begin` opens it, and it ends at the first `end` before which the arguments are whole JSON.
 * Text that may still become a `begin` is held back until it cannot; the last `end.length`
 * characters of a call's arguments likewise.
 *
 * The text around the calls is the reply's `content`, trimmed (the newlines between calls are
 * the format's, not the model's answer); with calls and no text, `content` is null. The final
 * message is read from the same object that streamed the deltas, so the two always agree.
 */
import type { ChatToolCall, ChatToolCallDelta } from '../../contract/index.ts';
import { partialMarkerLength } from './partial-marker.ts';

export interface CallTags {
  name: string;
  begin: string;
  end: string;
}

export interface ToolCallPiece {
  content: string;
  toolCalls: ChatToolCallDelta[];
}

interface OpenCall {
  index: number;
  end: string;
  args: string;
  /** Characters of `args` already sent. */
  sent: number;
}

export class ToolCallStream {
  readonly #tags: readonly CallTags[];
  readonly #begins: readonly string[];
  readonly #newId: () => string;
  #held = '';
  #open: OpenCall | null = null;
  #started = false;
  #space = '';
  #content = '';
  readonly #calls: ChatToolCall[] = [];

  constructor(tags: readonly CallTags[], newId: () => string) {
    this.#tags = tags;
    this.#begins = tags.map((t) => t.begin);
    this.#newId = newId;
  }

  /** The calls so far (the last one's arguments may be cut, where the reply ended inside it). */
  get toolCalls(): readonly ChatToolCall[] {
    return this.#calls;
  }

  /** The text around the calls, trimmed; null where there are calls and no text. */
  get content(): string | null {
    return this.#content === '' && this.#calls.length > 0 ? null : this.#content;
  }

  /** Whether the reply ended inside a call. */
  get inCall(): boolean {
    return this.#open !== null;
  }

  push(piece: string): ToolCallPiece {
    const out: ToolCallPiece = { content: '', toolCalls: [] };
    let text = this.#held + piece;
    this.#held = '';
    while (text !== '') {
      if (this.#open) {
        text = this.#extend(this.#open, text, out);
        continue;
      }
      const found = this.#firstBegin(text);
      if (found) {
        out.content += this.#text(text.slice(0, found.at));
        text = text.slice(found.at + found.tags.begin.length);
        const index = this.#calls.length;
        const id = this.#newId();
        this.#calls.push({ id, type: 'function', function: { name: found.tags.name, arguments: '' } });
        out.toolCalls.push({ index, id, type: 'function', function: { name: found.tags.name, arguments: '' } });
        this.#open = { index, end: found.tags.end, args: '', sent: 0 };
        continue;
      }
      const keep = partialMarkerLength(text, this.#begins);
      out.content += this.#text(text.slice(0, text.length - keep));
      this.#held = text.slice(text.length - keep);
      text = '';
    }
    return out;
  }

  /**
   * At the end of the reply: an open call keeps the arguments it has (without the start of its
   * closing tag, where the cut fell inside it); held text (the start of a
   * call's tag) is text, unless `cut` (max_tokens ended the reply): then it was a call cut before
   * its name, and is dropped.
   */
  flush(cut = false): ToolCallPiece {
    const out: ToolCallPiece = { content: '', toolCalls: [] };
    if (this.#open) {
      const call = this.#open;
      // Cut inside its closing tag: the arguments are whole without the tag's start.
      for (let k = call.end.length - 1; k > 0; k--) {
        if (call.args.endsWith(call.end.slice(0, k)) && isJson(call.args.slice(0, -k))) {
          call.args = call.args.slice(0, -k);
          break;
        }
      }
      this.#sendArgs(call, call.args.length, out);
    } else if (this.#held !== '' && !cut) {
      out.content += this.#text(this.#held);
    }
    this.#held = '';
    return out;
  }

  /** Feeds `text` to an open call; returns what follows the call once it has ended (else ""). */
  #extend(call: OpenCall, text: string, out: ToolCallPiece): string {
    const searchFrom = Math.max(0, call.args.length - call.end.length + 1);
    call.args += text;
    for (let at = call.args.indexOf(call.end, searchFrom); at >= 0; at = call.args.indexOf(call.end, at + 1)) {
      if (!isJson(call.args.slice(0, at))) continue;
      const rest = call.args.slice(at + call.end.length);
      call.args = call.args.slice(0, at);
      this.#sendArgs(call, at, out);
      this.#open = null;
      return rest;
    }
    this.#sendArgs(call, call.args.length - call.end.length, out);
    return '';
  }

  #sendArgs(call: OpenCall, upTo: number, out: ToolCallPiece): void {
    if (upTo <= call.sent) return;
    const piece = call.args.slice(call.sent, upTo);
    call.sent = upTo;
    this.#calls[call.index]!.function.arguments += piece;
    out.toolCalls.push({ index: call.index, function: { arguments: piece } });
  }

  #firstBegin(text: string): { at: number; tags: CallTags } | null {
    let best: { at: number; tags: CallTags } | null = null;
    for (const tags of this.#tags) {
      const at = text.indexOf(tags.begin);
      if (at >= 0 && (best === null || at < best.at)) best = { at, tags };
    }
    return best;
  }

  /** Text around the calls: leading whitespace dropped, inner whitespace held until text follows it. */
  #text(piece: string): string {
    let s = piece;
    if (!this.#started) {
      s = s.trimStart();
      if (s === '') return '';
      this.#started = true;
    }
    const joined = this.#space + s;
    const trailing = /\s*$/.exec(joined)![0];
    this.#space = trailing;
    const emitted = joined.slice(0, joined.length - trailing.length);
    this.#content += emitted;
    return emitted;
  }
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
