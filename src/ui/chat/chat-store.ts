import type { Signal } from '@preact/signals';
import type { ChatToolCall } from '../../contract/index.ts';
import { isRecord, isString, storedSignal } from '../state/stored-signal.ts';
import { DEFAULT_STRUCTURED, isStructuredDraft, type StructuredDraft } from './structured-draft.ts';

export interface ReplyStats {
  /** From sending to the first piece of text. */
  ttftMs: number | null;
  /** Tokens per second after the first one (decode speed). */
  tokensPerSecond: number | null;
  completionTokens: number;
  promptTokens: number | null;
  /** Prompt tokens the engine reused from the previous turn. */
  cachedTokens: number | null;
  finishReason: string | null;
}

export interface ChatEntry {
  id: string;
  /** `tool`: a tool's result, typed by the user for one of the assistant's calls. */
  role: 'user' | 'assistant' | 'tool';
  content: string;
  /** For a thinking model's reply: its reasoning (`reasoning_content`), shown collapsed above the answer. */
  reasoning?: string;
  /** For the assistant: still arriving, complete, stopped by the user, or broken off by an error. */
  state?: 'streaming' | 'done' | 'stopped' | 'failed';
  stats?: ReplyStats;
  error?: string;
  /** For the assistant: the tools it asked to call (`message.tool_calls`). */
  toolCalls?: ChatToolCall[];
  /** For the assistant: the results typed for its calls so far, by call id (drafts, until sent). */
  toolResults?: Record<string, string>;
  /** For the assistant: asked for JSON (`response_format` json_object or json_schema). */
  format?: 'json';
  /** For a tool result: the call it answers, and that call's function. */
  toolCallId?: string;
  toolName?: string;
}

/** The chat's settings as typed (strings, so that what was typed is kept even when invalid). */
export interface ChatSettings {
  system: string;
  temperature: string;
  topP: string;
  maxTokens: string;
  seed: string;
  dropOldest: boolean;
  /** `reasoning_effort` as chosen: '' leaves the model's default (absent in settings stored before it existed). */
  reasoningEffort?: string;
}

export const DEFAULT_SETTINGS: ChatSettings = {
  system: 'You are a helpful, concise assistant.',
  temperature: '0.7',
  topP: '0.95',
  maxTokens: '256',
  seed: '',
  dropOldest: true,
  reasoningEffort: '',
};

export interface ChatStore {
  messages: Signal<ChatEntry[]>;
  settings: Signal<ChatSettings>;
  draft: Signal<string>;
  /** Response format and tools, as typed. */
  structured: Signal<StructuredDraft>;
}

const isToolCall = (c: unknown): boolean =>
  isRecord(c) && isString(c['id']) && isRecord(c['function']) && isString(c['function']['name']) && isString(c['function']['arguments']);

const isEntry = (m: unknown): boolean =>
  isRecord(m) &&
  isString(m['id']) &&
  (m['role'] === 'user' || m['role'] === 'assistant' || m['role'] === 'tool') &&
  isString(m['content']) &&
  (m['toolCalls'] === undefined || (Array.isArray(m['toolCalls']) && m['toolCalls'].every(isToolCall))) &&
  (m['toolResults'] === undefined || (isRecord(m['toolResults']) && Object.values(m['toolResults']).every(isString)));

const isEntryList = (x: unknown): x is ChatEntry[] => Array.isArray(x) && x.every(isEntry);

const isSettings = (x: unknown): x is ChatSettings =>
  isRecord(x) && ['system', 'temperature', 'topP', 'maxTokens', 'seed'].every((k) => isString(x[k])) && typeof x['dropOldest'] === 'boolean';

export function createChatStore(): ChatStore {
  const messages = storedSignal<ChatEntry[]>('chat.messages', [], isEntryList);
  // A reply that was arriving when the page closed is a stopped one now.
  messages.value = messages.value.map((m) => (m.state === 'streaming' ? { ...m, state: 'stopped' } : m));
  return {
    messages,
    settings: storedSignal('chat.settings', DEFAULT_SETTINGS, isSettings),
    draft: storedSignal('chat.draft', '', isString),
    structured: storedSignal('chat.structured', DEFAULT_STRUCTURED, isStructuredDraft),
  };
}
