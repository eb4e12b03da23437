import { parseParam } from '../shared/parse-param.ts';
import type { ErrorInfo } from '../state/error-info.ts';
import type { SentMessage } from './chat-request.ts';
import type { SettingErrors } from './chat-settings.tsx';
import type { ChatEntry } from './chat-store.ts';
import type { StructuredErrors, ToolDraft } from './structured-draft.ts';

/** Where a chat error shows: beside a setting, a schema or tool, a tool result, or the message box. */
export interface ChatErrors {
  settings: SettingErrors;
  structured: StructuredErrors;
  /** By tool call id: beside the box of that call's result. */
  toolResults: Record<string, string>;
  composer?: string | undefined;
}

export const noChatErrors: ChatErrors = { settings: {}, structured: {}, toolResults: {} };

const SETTING_OF: Record<string, keyof SettingErrors> = {
  temperature: 'temperature',
  top_p: 'topP',
  max_tokens: 'maxTokens',
  max_completion_tokens: 'maxTokens',
  seed: 'seed',
};

const TOOL_PARTS = new Set(['name', 'description', 'parameters']);

/** What the request was made of, to read an error's `param` back to the field it names. */
export interface SentRequest {
  messages: readonly SentMessage[];
  history: readonly ChatEntry[];
  tools: readonly ToolDraft[];
}

function structured(errors: StructuredErrors): ChatErrors {
  return { ...noChatErrors, structured: errors };
}

/**
 * Places an engine error by its `param`: `temperature` → that setting;
 * `response_format.json_schema.schema.properties.age.multipleOf` → the schema editor;
 * `tools[1].function.parameters…` → that tool's parameters; `messages[3]…` → the system prompt or
 * the tool result that message came from; anything else → beside the message box.
 */
export function placeChatError(info: ErrorInfo, sent: SentRequest): ChatErrors {
  const path = parseParam(info.param);
  const message = info.message;
  const head = path[0];
  const setting = typeof head === 'string' ? SETTING_OF[head] : undefined;
  if (setting) return { ...noChatErrors, settings: { [setting]: message } };
  if (head === 'response_format') {
    if (path[1] === 'json_schema' && path[2] === 'name') return structured({ schemaName: message });
    if (path[1] === 'json_schema' && path[2] === 'schema') return structured({ schema: message });
    return structured({ format: message });
  }
  if (head === 'tools') {
    const tool = typeof path[1] === 'number' ? sent.tools[path[1]] : undefined;
    if (!tool) return structured({ tools: message });
    const part = path[2] === 'function' && typeof path[3] === 'string' && TOOL_PARTS.has(path[3]) ? path[3] : 'other';
    return structured({ tool: { [tool.id]: { [part]: message } } });
  }
  if (head === 'tool_choice') return structured({ toolChoice: message });
  if (head === 'parallel_tool_calls') return structured({ parallelToolCalls: message });
  if (head === 'messages' && typeof path[1] === 'number') {
    const at = sent.messages[path[1]];
    if (at && at.entryId === null) return { ...noChatErrors, settings: { system: message } };
    const entry = at ? sent.history.find((m) => m.id === at.entryId) : undefined;
    if (entry?.role === 'tool' && entry.toolCallId) return { ...noChatErrors, toolResults: { [entry.toolCallId]: message } };
  }
  return { ...noChatErrors, composer: message };
}
