import { useEffect, useRef } from 'preact/hooks';
import type { ChatToolCall } from '../../contract/index.ts';
import { formatMs, formatRate } from '../shared/format.ts';
import type { ChatEntry, ReplyStats } from './chat-store.ts';
import { JsonReply } from './json-reply.tsx';
import { ToolCallList } from './tool-call-list.tsx';

function Stats({ stats, state }: { stats: ReplyStats | undefined; state: ChatEntry['state'] }) {
  const parts: string[] = [];
  if (stats?.ttftMs != null) parts.push(`first token ${formatMs(stats.ttftMs)}`);
  if (stats?.tokensPerSecond != null) parts.push(`${formatRate(stats.tokensPerSecond)} tokens/s`);
  if (stats && stats.completionTokens > 0) parts.push(`${stats.completionTokens} token${stats.completionTokens === 1 ? '' : 's'}`);
  if (stats?.cachedTokens) parts.push(`${stats.cachedTokens} of ${stats.promptTokens ?? '?'} prompt tokens reused`);
  if (stats?.finishReason === 'length') parts.push('cut at max tokens');
  return (
    <p class="message-stats" data-testid="reply-stats" data-tokens={stats ? String(stats.completionTokens) : undefined} data-finish={stats?.finishReason ?? undefined}>
      {state === 'stopped' && <span class="badge warn">stopped</span>}
      {state === 'streaming' && <span class="badge live">writing…</span>}
      {parts.join(' · ')}
    </p>
  );
}

const ROLE_LABEL: Record<ChatEntry['role'], string> = { user: 'You', assistant: 'Assistant', tool: 'Tool result' };

const hasCalls = (m: ChatEntry): m is ChatEntry & { toolCalls: ChatToolCall[] } => (m.toolCalls?.length ?? 0) > 0;

interface Props {
  messages: readonly ChatEntry[];
  streaming: boolean;
  /** The reply whose tool calls wait for their results, if any. */
  pendingId: string | null;
  /** About the results typed for the waiting calls, by call key. */
  resultErrors: Record<string, string>;
  onToolResult(entryId: string, key: string, text: string): void;
  onSendResults(): void;
}

/** The conversation; it follows new text while the reader is at its end. */
export function ChatLog({ messages, streaming, pendingId, resultErrors, onToolResult, onSendResults }: Props) {
  const box = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);
  const last = messages[messages.length - 1];
  useEffect(() => {
    const el = box.current;
    if (el && pinned.current) el.scrollTop = el.scrollHeight;
  }, [messages.length, last?.content, last?.reasoning, last?.toolCalls]);
  const onScroll = () => {
    const el = box.current;
    if (el) pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
  };
  return (
    <div
      class="chat-log"
      ref={box}
      onScroll={onScroll}
      role="log"
      aria-live="polite"
      aria-busy={streaming}
      aria-label="Conversation"
      tabIndex={0}
      data-testid="chat-log"
    >
      {messages.length === 0 && <p class="muted empty">No messages yet. Say something below.</p>}
      {messages.map((m) => (
        <div key={m.id} class={`message ${m.role}`} data-testid="message" data-role={m.role} data-state={m.state ?? 'done'}>
          <p class="message-role">
            {ROLE_LABEL[m.role]}
            {m.role === 'tool' && m.toolName && <span class="tool-result-name"> · {m.toolName}</span>}
          </p>
          {m.reasoning && (
            // Collapsed; opened, it keeps filling while the reasoning streams in.
            <details class="reasoning" data-testid="reasoning">
              <summary>
                Reasoning
                {m.state === 'streaming' && m.content === '' && <span class="muted"> (thinking…)</span>}
              </summary>
              <div class="reasoning-text" data-testid="reasoning-text">
                {m.reasoning}
              </div>
            </details>
          )}
          {m.format === 'json' && m.content !== '' ? (
            <JsonReply entry={m} />
          ) : (
            (m.content !== '' || !hasCalls(m)) && (
              <div class={`message-text${m.role === 'tool' ? ' mono' : ''}`} data-testid="message-text">
                {m.content}
                {m.state === 'streaming' && !hasCalls(m) && <span class="caret" aria-hidden="true" />}
              </div>
            )
          )}
          {hasCalls(m) && (
            <ToolCallList
              entry={m}
              answerable={m.id === pendingId}
              errors={m.id === pendingId ? resultErrors : {}}
              onResult={(key, text) => onToolResult(m.id, key, text)}
              onSend={onSendResults}
            />
          )}
          {m.role === 'assistant' && <Stats stats={m.stats} state={m.state} />}
          {m.error && (
            <p class="field-error" role="alert">
              {m.error}
            </p>
          )}
        </div>
      ))}
    </div>
  );
}
