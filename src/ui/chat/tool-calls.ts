import type { ChatToolCall, ChatToolCallDelta } from '../../contract/index.ts';

/** Tool calls being streamed, at their `index` (a slot the stream skipped stays empty). */
export type ToolCallSlots = readonly (ChatToolCall | undefined)[];

/**
 * Folds streamed tool-call pieces into the calls so far, as OpenAI's client does: by `index`;
 * `id` and the name are set when a piece carries them, `arguments` are concatenated. Returns new
 * slots (the old ones are left as they were, for the render that holds them).
 */
export function addToolCallDeltas(slots: ToolCallSlots, deltas: readonly ChatToolCallDelta[]): (ChatToolCall | undefined)[] {
  const out = Array.from(slots, (c) => (c ? { ...c, function: { ...c.function } } : undefined));
  for (const d of deltas) {
    if (!Number.isInteger(d.index) || d.index < 0) continue;
    const call = (out[d.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
    if (d.id) call.id = d.id;
    if (d.function?.name) call.function.name = d.function.name;
    if (d.function?.arguments) call.function.arguments += d.function.arguments;
  }
  return out;
}

/** The calls of the slots, in index order. */
export function toolCallsOf(slots: ToolCallSlots): ChatToolCall[] {
  return slots.filter((c): c is ChatToolCall => c !== undefined);
}

/** The key of a call's result: its id, or its place when the server gave none. */
export function callKey(call: ChatToolCall, index: number): string {
  return call.id || `#${index}`;
}

/** JSON text read back for display: the value, or why it is not JSON. */
export type ParsedJson = { ok: true; value: unknown } | { ok: false; error: string };

export function parseJson(text: string): ParsedJson {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}
