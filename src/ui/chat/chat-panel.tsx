import { useRef, useState } from 'preact/hooks';
import type { JevClient } from '../../facade/jev-client.ts';
import { CodeSnippets } from '../shared/code-snippets.tsx';
import { FieldError } from '../shared/field-error.tsx';
import { formatRate } from '../shared/format.ts';
import { chatSnippets } from '../shared/snippets.ts';
import { errorInfo, isAbort } from '../state/error-info.ts';
import { newId } from '../state/new-id.ts';
import { placeChatError, noChatErrors, type ChatErrors } from './chat-errors.ts';
import { ChatLog } from './chat-log.tsx';
import { chatRequest, requestMessages } from './chat-request.ts';
import { ChatSettingsForm } from './chat-settings.tsx';
import type { ChatEntry, ChatStore } from './chat-store.ts';
import { streamReply } from './chat-stream.ts';
import { ResponseFormatSettings } from './response-format-settings.tsx';
import { errorsStillApplying, expectsJson, hasStructuredErrors, structuredProblems, type StructuredDraft, type StructuredErrors } from './structured-draft.ts';
import { pendingCalls, resultEntries } from './tool-results.ts';
import { ToolsEditor } from './tools-editor.tsx';

function revealFirstError() {
  requestAnimationFrame(() => document.querySelector('#chat-panel .field-error')?.scrollIntoView({ block: 'center' }));
}

/** The page's own problems, less the JSON ones the editors already show as they are typed. */
function shownOnSend(problems: StructuredErrors): StructuredErrors {
  const tool: NonNullable<StructuredErrors['tool']> = {};
  for (const [id, t] of Object.entries(problems.tool ?? {})) {
    const { parameters: _shownLive, ...rest } = t;
    if (Object.keys(rest).length > 0) tool[id] = rest;
  }
  return { ...problems, schema: undefined, tool };
}

/** The chat: settings, the conversation, and a box to write in; replies stream in and can be stopped. */
export function ChatPanel({ client, store }: { client: JevClient; store: ChatStore }) {
  const messages = store.messages.value;
  const settings = store.settings.value;
  const draft = store.draft.value;
  const structured = store.structured.value;
  const [errors, setErrors] = useState<ChatErrors>(noChatErrors);
  // The structured settings the errors are about: each fades once its field is edited.
  const [errorsFor, setErrorsFor] = useState<StructuredDraft>(structured);
  const [streaming, setStreaming] = useState(false);
  const [status, setStatus] = useState('');
  const [cleared, setCleared] = useState<ChatEntry[] | null>(null);
  const controller = useRef<AbortController | null>(null);
  const pending = streaming ? null : pendingCalls(messages);

  const patch = (id: string, change: Partial<ChatEntry>) => {
    store.messages.value = store.messages.value.map((m) => (m.id === id ? { ...m, ...change } : m));
  };

  async function send(e?: Event) {
    e?.preventDefault();
    const text = store.draft.value;
    const waiting = pendingCalls(store.messages.value);
    const hasText = text.trim() !== '';
    if (streaming || (!hasText && !waiting)) return;
    setCleared(null);
    // What the page can see itself is shown without asking the engine, and nothing is sent.
    const format = store.structured.value;
    const problems = structuredProblems(format);
    const results = waiting ? resultEntries(waiting, newId) : [];
    const missing = results.filter((r) => r.content.trim() === '');
    setErrorsFor(format);
    if (hasStructuredErrors(problems) || missing.length > 0) {
      setErrors({
        ...noChatErrors,
        structured: shownOnSend(problems),
        toolResults: Object.fromEntries(missing.map((r) => [r.key, 'Write what the tool returned before sending.'])),
      });
      setStatus(missing.length > 0 ? 'Not sent: each tool call needs its result first.' : 'Not sent: fix the marked settings first.');
      revealFirstError();
      return;
    }
    setErrors(noChatErrors);
    const toolEntries = results.map((r) => r.entry);
    const user: ChatEntry | null = hasText ? { id: newId(), role: 'user', content: text } : null;
    const reply: ChatEntry = { id: newId(), role: 'assistant', content: '', state: 'streaming', ...(expectsJson(format) ? { format: 'json' as const } : {}) };
    const history = [...store.messages.value, ...toolEntries, ...(user ? [user] : [])];
    const sentMessages = requestMessages(store.settings.value, history);
    const body = chatRequest(store.settings.value, history, format);
    store.messages.value = [...history, reply];
    if (user) store.draft.value = '';
    const abort = new AbortController();
    controller.current = abort;
    setStreaming(true);
    setStatus('Writing…');
    let started = false;
    const shown = (p: { text: string; reasoning: string; toolCalls: ChatEntry['toolCalls'] }): Partial<ChatEntry> => ({
      content: p.text,
      ...(p.reasoning ? { reasoning: p.reasoning } : {}),
      ...(p.toolCalls && p.toolCalls.length > 0 ? { toolCalls: p.toolCalls } : {}),
    });
    try {
      const done = await streamReply(client, body, abort.signal, (p) => {
        started = p.started;
        patch(reply.id, { ...shown(p), stats: p.stats });
      });
      patch(reply.id, { ...shown(done), stats: done.stats, state: 'done' });
      const s = done.stats;
      const calls = done.toolCalls.length;
      setStatus(
        calls > 0
          ? `Reply done: it asks to call ${calls === 1 ? 'a tool' : `${calls} tools`}; write the result${calls === 1 ? '' : 's'} to go on.`
          : `Reply done: ${s.completionTokens} tokens${s.tokensPerSecond != null ? `, ${formatRate(s.tokensPerSecond)} tokens/s` : ''}.`,
      );
    } catch (err) {
      const current = store.messages.value.find((m) => m.id === reply.id);
      if (isAbort(err)) {
        if (current && (current.content !== '' || current.reasoning || current.toolCalls?.length)) patch(reply.id, { state: 'stopped' });
        else store.messages.value = store.messages.value.filter((m) => m.id !== reply.id);
        setStatus('Stopped. The text so far is kept.');
      } else if (!started) {
        // Refused before any reply: take the message (and the tool results) back, and say why beside the field at fault.
        const taken = new Set([reply.id, ...(user ? [user.id] : []), ...toolEntries.map((t) => t.id)]);
        store.messages.value = store.messages.value.filter((m) => !taken.has(m.id));
        if (user && store.draft.value === '') store.draft.value = text;
        setErrors(placeChatError(errorInfo(err), { messages: sentMessages, history, tools: format.tools }));
        setStatus('The message was not sent.');
        revealFirstError();
      } else {
        patch(reply.id, { state: 'failed', error: `The reply broke off: ${errorInfo(err).message}` });
        setStatus('The reply broke off.');
      }
    } finally {
      controller.current = null;
      setStreaming(false);
    }
  }

  const stop = () => controller.current?.abort();
  const clear = () => {
    setCleared(store.messages.value);
    store.messages.value = [];
    setStatus('Conversation cleared.');
  };
  const restore = () => {
    if (cleared) store.messages.value = cleared;
    setCleared(null);
    setStatus('Conversation restored.');
  };
  const onKey = (e: KeyboardEvent) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) void send(e);
    else if (e.key === 'Escape' && streaming) stop();
  };
  const setToolResult = (entryId: string, key: string, text: string) => {
    const entry = store.messages.value.find((m) => m.id === entryId);
    if (entry) patch(entryId, { toolResults: { ...entry.toolResults, [key]: text } });
  };

  const structuredErrors = errorsStillApplying(errors.structured, errorsFor, structured);

  // The request the snippets show: what Send would send now (results typed so far, and the draft).
  const next = [
    ...messages,
    ...(pending ? resultEntries(pending, (i) => `next-result-${i}`).map((r) => r.entry) : []),
    ...(draft.trim() ? [{ id: 'next', role: 'user' as const, content: draft }] : []),
  ];

  return (
    <div class="chat panel" id="chat-panel">
      <div class="chat-head">
        <h2 id="chat-h">Chat</h2>
        <div class="row">
          {cleared && (
            <button type="button" class="link-button" onClick={restore}>
              Undo clear
            </button>
          )}
          <button type="button" class="button small" onClick={clear} disabled={streaming || messages.length === 0}>
            Clear conversation
          </button>
        </div>
      </div>
      <ChatSettingsForm settings={settings} errors={errors.settings} onChange={(s) => (store.settings.value = s)} />
      <ResponseFormatSettings draft={structured} errors={structuredErrors} onChange={(d) => (store.structured.value = d)} />
      <ToolsEditor draft={structured} errors={structuredErrors} onChange={(d) => (store.structured.value = d)} />
      <ChatLog
        messages={messages}
        streaming={streaming}
        pendingId={pending?.entry.id ?? null}
        resultErrors={errors.toolResults}
        onToolResult={setToolResult}
        onSendResults={() => void send()}
      />
      <form class="composer" onSubmit={send} noValidate>
        <label for="chat-input" class="visually-hidden">
          Message
        </label>
        <textarea
          id="chat-input"
          rows={2}
          placeholder={pending ? 'Write a message (optional: the tool results are sent with it)…' : 'Write a message…'}
          value={draft}
          aria-invalid={errors.composer ? true : undefined}
          aria-describedby={errors.composer ? 'chat-input-error chat-input-hint' : 'chat-input-hint'}
          onInput={(e) => (store.draft.value = e.currentTarget.value)}
          onKeyDown={onKey}
        />
        {streaming ? (
          <button type="button" key="stop" class="button danger" onClick={stop}>
            Stop
          </button>
        ) : (
          <button type="submit" key="send" class="button primary" disabled={draft.trim() === '' && !pending}>
            Send
          </button>
        )}
      </form>
      <p class="hint" id="chat-input-hint">
        Enter sends · Shift+Enter starts a new line · Esc stops a reply
      </p>
      <FieldError id="chat-input-error" message={errors.composer} />
      <p role="status" class="muted small-text" data-testid="chat-status">
        {status}
      </p>
      <CodeSnippets
        snippets={chatSnippets(location.origin, chatRequest(settings, next, structured))}
        note="Sent to this page's origin, where the service worker answers: run fetch or the openai client in this tab; curl needs a server that answers the same path."
      />
    </div>
  );
}
