import type { ChatToolCall } from '../../contract/index.ts';
import type { ChatEntry } from './chat-store.ts';
import { callKey } from './tool-calls.ts';

/** A reply whose tool calls wait for their results. */
export interface PendingCalls {
  entry: ChatEntry;
  calls: ChatToolCall[];
}

/** The conversation's last turn, when it is a complete reply asking for tools (nothing answers it yet). */
export function pendingCalls(messages: readonly ChatEntry[]): PendingCalls | null {
  const last = messages[messages.length - 1];
  if (!last || last.role !== 'assistant' || (last.state ?? 'done') !== 'done' || !last.toolCalls?.length) return null;
  return { entry: last, calls: last.toolCalls };
}

/** The `tool` turns of the results typed for the waiting calls, in the calls' order. */
export function resultEntries(p: PendingCalls, makeId: (index: number) => string): { key: string; content: string; entry: ChatEntry }[] {
  return p.calls.map((call, i) => {
    const key = callKey(call, i);
    const content = p.entry.toolResults?.[key] ?? '';
    return { key, content, entry: { id: makeId(i), role: 'tool', content, toolCallId: call.id, toolName: call.function.name } };
  });
}
