/**
 * Renders messages with a model's own chat template, so that no request fails on the template:
 *
 * - **No system role.** Whether the template has one is found by rendering a probe conversation
 *   (a system message, then a user message): a template that raises on it, or drops the system
 *   text, has none, and the system text is folded into the first user turn as
 *   `{system}\n\n{user}` (what Gemma 3's own template does with a leading system message).
 * - **A conversation the template refuses anyway** (Gemma's strict user/model alternation, a
 *   second system message, a conversation that opens with the assistant): it is rendered again
 *   normalized (every system message folded into the user turn after it, consecutive turns of
 *   one role joined with a blank line, an empty user turn opening a conversation that starts
 *   with the assistant). Only a template that refuses even that is an error (400, `messages`).
 * - **Thinking.** `enableThinking` is passed to the template as `enable_thinking` (Qwen3's
 *   switch); undefined leaves the template's default.
 */
import { JevError, type ChatMessage } from '../../contract/index.ts';
import type { LanguageModel } from './language-model.ts';

type Tokenizer = LanguageModel['tokenizer'];

export interface RenderOptions {
  /** Qwen3's `enable_thinking`; undefined: the template's default. */
  enableThinking?: boolean | undefined;
  /**
   * Llama 3.x's `date_string` (the "Today Date" line of its system turn); undefined: the
   * template's default (today's date, where the template asks for it).
   */
  dateString?: string | undefined;
  /** Tool definitions for a template that renders them (OpenAI's shape); undefined: none. */
  tools?: object[] | undefined;
}

/** The model's chat template, or null when it has none (a plain transcript is used then). */
export function chatTemplateOf(tokenizer: Tokenizer): string | null {
  const template = (tokenizer as unknown as { chat_template?: unknown }).chat_template;
  return typeof template === 'string' && template.length > 0 ? template : null;
}

const PROBE_SYSTEM = 'Probe system text 7f3a.';
const PROBE_USER = 'Probe user text 9c1e.';
// Keyed by the template text: the answer depends on nothing else.
const systemRoleCache = new Map<string, boolean>();

/** Whether the template renders a leading system message (itself or folded by its own code) rather than raising or dropping it. */
export function templateHasSystemRole(tokenizer: Tokenizer): boolean {
  const template = chatTemplateOf(tokenizer) ?? '';
  const known = systemRoleCache.get(template);
  if (known !== undefined) return known;
  let has: boolean;
  try {
    const text = render(tokenizer, [
      { role: 'system', content: PROBE_SYSTEM },
      { role: 'user', content: PROBE_USER },
    ], {});
    has = text.includes(PROBE_SYSTEM) && text.includes(PROBE_USER);
  } catch {
    has = false;
  }
  systemRoleCache.set(template, has);
  return has;
}

/** The conversation as the template reads it, with the generation prompt. */
export function renderChatTemplate(tokenizer: Tokenizer, messages: readonly ChatMessage[], options: RenderOptions = {}): string {
  // Copies, with their tool fields (tool_calls, tool_call_id) passed to the template as sent.
  const plain = messages.map((m): ChatMessage => ({ ...m }));
  const first = templateHasSystemRole(tokenizer) ? plain : foldSystem(plain);
  let firstError: unknown = null;
  try {
    const text = render(tokenizer, first, options);
    if (systemTextKept(text, first)) return text;
  } catch (e) {
    firstError = e;
  }
  try {
    return render(tokenizer, normalize(plain), options);
  } catch (e) {
    const reason = (firstError ?? e) as Error;
    throw new JevError('invalid_request', `The model's chat template refused these messages: ${reason?.message ?? String(reason)}`, {
      param: 'messages',
      cause: e,
    });
  }
}

/** System messages folded into the first user turn after them: `{system}\n\n{user}`. */
export function foldSystem(messages: readonly ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  let pending: string[] = [];
  for (const m of messages) {
    if (m.role === 'system') {
      pending.push(m.content);
    } else if (m.role === 'user' && pending.length > 0) {
      out.push({ role: 'user', content: `${pending.join('\n\n')}\n\n${m.content}` });
      pending = [];
    } else {
      out.push({ ...m });
    }
  }
  // System text with no user turn after it becomes a user turn of its own.
  if (pending.length > 0) out.push({ role: 'user', content: pending.join('\n\n') });
  return out;
}

/** Folded, consecutive turns of one role joined, and opening with a user turn. */
function normalize(messages: readonly ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of foldSystem(messages)) {
    const last = out[out.length - 1];
    // Tool results and tool calls stay messages of their own (each names its call).
    if (last && last.role === m.role && m.role !== 'tool' && !('tool_calls' in last) && !('tool_calls' in m)) last.content = `${last.content}\n\n${m.content}`;
    else out.push({ ...m });
  }
  if (out[0]?.role === 'assistant') out.unshift({ role: 'user', content: '' });
  return out;
}

function systemTextKept(text: string, messages: readonly ChatMessage[]): boolean {
  return messages.every((m) => m.role !== 'system' || text.includes(m.content.trim()));
}

function render(tokenizer: Tokenizer, messages: readonly ChatMessage[], options: RenderOptions): string {
  return tokenizer.apply_chat_template(messages as ChatMessage[], {
    tokenize: false,
    add_generation_prompt: true,
    ...(options.enableThinking === undefined ? {} : { enable_thinking: options.enableThinking }),
    ...(options.dateString === undefined ? {} : { date_string: options.dateString }),
    ...(options.tools === undefined ? {} : { tools: options.tools as never }),
  }) as string;
}
