import type { ChatEntry, ChatSettings } from './chat-store.ts';
import { structuredFields, type StructuredDraft } from './structured-draft.ts';

/** A number as typed: empty is "not set"; anything else is sent as typed, for the engine to judge. */
function numberField(raw: string): number | undefined {
  const t = raw.trim();
  if (t === '') return undefined;
  const n = Number(t);
  return Number.isNaN(n) ? undefined : n;
}

/** A message of the request, and the conversation entry it came from (null: the system prompt). */
export interface SentMessage {
  message: Record<string, unknown>;
  entryId: string | null;
}

/**
 * The request's messages for a conversation. An assistant turn that finished asking for tools
 * keeps its `tool_calls` (its content may then be null); a stopped or failed turn is sent as its
 * text only, or not at all.
 */
export function requestMessages(settings: ChatSettings, history: readonly ChatEntry[]): SentMessage[] {
  const out: SentMessage[] = [];
  if (settings.system.trim() !== '') out.push({ message: { role: 'system', content: settings.system }, entryId: null });
  for (const m of history) {
    if (m.state === 'failed') continue;
    if (m.role === 'tool') {
      out.push({ message: { role: 'tool', tool_call_id: m.toolCallId ?? '', content: m.content }, entryId: m.id });
      continue;
    }
    const calls = m.role === 'assistant' && (m.state ?? 'done') === 'done' && m.toolCalls?.length ? m.toolCalls : null;
    if (calls) {
      out.push({ message: { role: 'assistant', content: m.content === '' ? null : m.content, tool_calls: calls }, entryId: m.id });
      continue;
    }
    if (m.content === '') continue;
    // The answer only: a thinking model's template strips earlier reasoning anyway.
    out.push({ message: { role: m.role, content: m.content }, entryId: m.id });
  }
  return out;
}

/** The chat completion request for a conversation, with the settings as typed. */
export function chatRequest(settings: ChatSettings, history: readonly ChatEntry[], structured?: StructuredDraft): Record<string, unknown> {
  const messages = requestMessages(settings, history).map((s) => s.message);
  const body: Record<string, unknown> = { model: 'jev', messages, stream: true, stream_options: { include_usage: true } };
  const fields: [string, string][] = [
    ['temperature', settings.temperature],
    ['top_p', settings.topP],
    ['max_tokens', settings.maxTokens],
    ['seed', settings.seed],
  ];
  for (const [name, raw] of fields) {
    const n = numberField(raw);
    if (n !== undefined) body[name] = n;
  }
  body['truncation'] = settings.dropOldest ? 'drop_oldest' : 'error';
  if (settings.reasoningEffort) body['reasoning_effort'] = settings.reasoningEffort;
  if (structured) Object.assign(body, structuredFields(structured));
  return body;
}

/** Whether the system prompt is the request's first message (so `messages[0]` means it). */
export function hasSystem(settings: ChatSettings): boolean {
  return settings.system.trim() !== '';
}
