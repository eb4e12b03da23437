/**
 * OpenAI's shapes for structured output and tool calling, as the playground sends and reads them.
 * Local to the page until the contract (src/contract/chat-request.ts, chat-message.ts,
 * chat-response.ts) carries them; then these give way to its types.
 */

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; description?: string; schema: Record<string, unknown>; strict?: boolean } };

export interface FunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

export type ToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

/** A call the assistant asks for; `arguments` is JSON text, as the model wrote it. */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A piece of a tool call in a streamed chunk (`delta.tool_calls[]`): by `index`, arguments in pieces. */
export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

/** A streamed chunk's delta as the page reads it: the contract's, and OpenAI's `tool_calls`. */
export interface ReplyDelta {
  content?: string | null;
  reasoning_content?: string;
  tool_calls?: ToolCallDelta[];
}
