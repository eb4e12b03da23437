/**
 * A conversation with tools, as the model's template reads it (tool-format.ts names the styles):
 *
 * - **hermes, llama3-json:** the tools go to the template as `tools` (OpenAI's shape, which the
 *   Qwen and Llama templates read); an assistant turn's calls go as `tool_calls` with their
 *   arguments parsed (the templates write them with `tojson`), `tool` messages as they are. Llama
 *   3.x renders one call per assistant turn: a turn with several becomes consecutive turns.
 * - **fallback:** the tools are described in a system text of our own (`FALLBACK_TOOL_PROMPT`,
 *   in the hermes format, appended to the first system message or opening the conversation); an
 *   assistant turn's calls are written into its text in that format, and each tool result becomes
 *   a user turn `<tool_response>\n{content}\n</tool_response>`, since these templates know only
 *   user and assistant.
 *
 * History with tool calls is rendered this way whether or not the request still offers tools.
 */
import type { ChatMessage, ChatTool, ChatToolCall } from '../../contract/index.ts';
import { callTags, type ToolStyle } from './tool-format.ts';

/** The system text that teaches a template without tools the hermes format (docs/structured-output.md). */
export const FALLBACK_TOOL_PROMPT =
  '# Tools\n\nYou may call one or more functions to help with the user\'s request. The functions, as JSON schemas:\n<tools>\n{tools}\n</tools>\n\n' +
  'To call a function, write its name and its arguments as one JSON object between tags, one block per call:\n' +
  '<tool_call>\n{"name": <function-name>, "arguments": <arguments-object>}\n</tool_call>';

export interface ToolConversation {
  messages: ChatMessage[];
  /** The tools to pass to the template (`tools`), where it renders them; undefined otherwise. */
  tools: object[] | undefined;
}

/** `messages` ready for the template, and the tools it renders (null `tools`: none offered). */
export function toolConversation(style: ToolStyle, messages: readonly ChatMessage[], tools: readonly ChatTool[] | null): ToolConversation {
  const offered = tools && tools.length > 0 ? tools.map(toolDefinition) : null;
  if (style === 'fallback') return { messages: fallbackMessages(messages, offered), tools: undefined };
  const out: ChatMessage[] = [];
  for (const m of messages) {
    if (m.role !== 'assistant' || !m.tool_calls || m.tool_calls.length === 0) {
      out.push(m);
      continue;
    }
    const calls = m.tool_calls.map(templateCall);
    if (style === 'llama3-json') {
      calls.forEach((call, i) => out.push({ role: 'assistant', content: i === 0 ? m.content : '', tool_calls: [call] } as unknown as ChatMessage));
    } else {
      out.push({ role: 'assistant', content: m.content, tool_calls: calls } as unknown as ChatMessage);
    }
  }
  return { messages: out, tools: offered ?? undefined };
}

function toolDefinition(tool: ChatTool): object {
  const { name, description, parameters } = tool.function;
  return { type: 'function', function: { name, ...(description === undefined ? {} : { description }), parameters } };
}

/** A call with its arguments parsed, as the templates' `tojson` expects (text that is not JSON stays text). */
function templateCall(call: ChatToolCall): object {
  let args: unknown = call.function.arguments;
  try {
    args = JSON.parse(call.function.arguments);
  } catch {
    // kept as sent
  }
  return { id: call.id, type: 'function', function: { name: call.function.name, arguments: args } };
}

function fallbackMessages(messages: readonly ChatMessage[], offered: object[] | null): ChatMessage[] {
  const out: ChatMessage[] = messages.map((m): ChatMessage => {
    if (m.role === 'tool') return { role: 'user', content: `<tool_response>\n${m.content}\n</tool_response>` };
    if (m.role === 'assistant' && m.tool_calls && m.tool_calls.length > 0) {
      const calls = m.tool_calls.map((c) => {
        const { begin, end } = callTags('fallback', c.function.name);
        return `${begin}${c.function.arguments}${end}`;
      });
      return { role: 'assistant', content: [m.content, ...calls].filter((t) => t !== '').join('\n') };
    }
    return m;
  });
  if (!offered) return out;
  const text = FALLBACK_TOOL_PROMPT.replace('{tools}', offered.map((t) => JSON.stringify(t)).join('\n'));
  if (out[0]?.role === 'system') out[0] = { role: 'system', content: `${out[0].content}\n\n${text}` };
  else out.unshift({ role: 'system', content: text });
  return out;
}
