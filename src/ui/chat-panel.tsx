import { useRef, useState } from 'preact/hooks';
import type { JevClient } from '../facade/jev-client.ts';
import { placeChatError, noChatErrors, type ChatErrors } from './chat-errors.ts';
import { ChatLog } from './chat-log.tsx';
import { chatRequest, hasSystem } from './chat-request.ts';
import { ChatSettingsForm } from './chat-settings.tsx';
import type { ChatEntry, ChatStore } from './chat-store.ts';
import { streamReply } from './chat-stream.ts';
import { CodeSnippets } from './code-snippets.tsx';
import { errorInfo, isAbort } from './error-info.ts';
import { FieldError } from './field-error.tsx';
import { formatRate } from './format.ts';
import { newId } from './question-draft.ts';
import { chatSnippets } from './snippets.ts';

/** The chat: settings, the conversation, and a box to write in; replies stream in and can be stopped. */
export function ChatPanel({ client, store }: { client: JevClient; store: ChatStore }) {
  const messages = store.messages.value;
  const settings = store.settings.value;
  const draft = store.draft.value;
  const [errors, setErrors] = useState<ChatErrors>(noChatErrors);
  const [streaming, setStreaming] = useState(false);
  const [status, setStatus] = useState('');
  const [cleared, setCleared] = useState<ChatEntry[] | null>(null);
  const controller = useRef<AbortController | null>(null);

  const patch = (id: string, change: Partial<ChatEntry>) => {
    store.messages.value = store.messages.value.map((m) => (m.id === id ? { ...m, ...change } : m));
  };

  async function send(e?: Event) {
    e?.preventDefault();
    const text = store.draft.value;
    if (streaming || text.trim() === '') return;
    setErrors(noChatErrors);
    setCleared(null);
    const user: ChatEntry = { id: newId(), role: 'user', content: text };
    const reply: ChatEntry = { id: newId(), role: 'assistant', content: '', state: 'streaming' };
    const history = [...store.messages.value, user];
    const body = chatRequest(store.settings.value, history);
    store.messages.value = [...history, reply];
    store.draft.value = '';
    const abort = new AbortController();
    controller.current = abort;
    setStreaming(true);
    setStatus('Writing…');
    let started = false;
    try {
      const done = await streamReply(client, body, abort.signal, (p) => {
        started = p.started;
        patch(reply.id, { content: p.text, stats: p.stats, ...(p.reasoning ? { reasoning: p.reasoning } : {}) });
      });
      patch(reply.id, { content: done.text, stats: done.stats, state: 'done', ...(done.reasoning ? { reasoning: done.reasoning } : {}) });
      const s = done.stats;
      setStatus(`Reply done: ${s.completionTokens} tokens${s.tokensPerSecond != null ? `, ${formatRate(s.tokensPerSecond)} tokens/s` : ''}.`);
    } catch (err) {
      const current = store.messages.value.find((m) => m.id === reply.id);
      if (isAbort(err)) {
        if (current && (current.content !== '' || current.reasoning)) patch(reply.id, { state: 'stopped' });
        else store.messages.value = store.messages.value.filter((m) => m.id !== reply.id);
        setStatus('Stopped. The text so far is kept.');
      } else if (!started) {
        // Refused before any reply: take the message back into the box, and say why beside the field at fault.
        store.messages.value = store.messages.value.filter((m) => m.id !== reply.id && m.id !== user.id);
        if (store.draft.value === '') store.draft.value = text;
        setErrors(placeChatError(errorInfo(err), hasSystem(store.settings.value)));
        setStatus('The message was not sent.');
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
      <ChatSettingsForm settings={settings} errors={errors.settings} onChange={(next) => (store.settings.value = next)} />
      <ChatLog messages={messages} streaming={streaming} />
      <form class="composer" onSubmit={send} noValidate>
        <label for="chat-input" class="visually-hidden">
          Message
        </label>
        <textarea
          id="chat-input"
          rows={2}
          placeholder="Write a message…"
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
          <button type="submit" key="send" class="button primary" disabled={draft.trim() === ''}>
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
        snippets={chatSnippets(location.origin, chatRequest(settings, draft.trim() ? [...messages, { id: 'next', role: 'user', content: draft }] : messages))}
        note="Sent to this page's origin, where the service worker answers: run fetch or the openai client in this tab; curl needs a server that answers the same path."
      />
    </div>
  );
}
