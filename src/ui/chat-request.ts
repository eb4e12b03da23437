import type { ChatEntry, ChatSettings } from './chat-store.ts';

/** A number as typed: empty is "not set"; anything else is sent as typed, for the engine to judge. */
function numberField(raw: string): number | undefined {
  const t = raw.trim();
  if (t === '') return undefined;
  const n = Number(t);
  return Number.isNaN(n) ? undefined : n;
}

/** The chat completion request for a conversation, with the settings as typed. */
export function chatRequest(settings: ChatSettings, history: readonly ChatEntry[]): Record<string, unknown> {
  const messages: { role: string; content: string }[] = [];
  if (settings.system.trim() !== '') messages.push({ role: 'system', content: settings.system });
  for (const m of history) {
    if (m.content === '' || m.state === 'failed') continue;
    // The answer only: a thinking model's template strips earlier reasoning anyway.
    messages.push({ role: m.role, content: m.content });
  }
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
  return body;
}

/** Whether the system prompt is the request's first message (so `messages[0]` means it). */
export function hasSystem(settings: ChatSettings): boolean {
  return settings.system.trim() !== '';
}
