/**
 * The AI SDK's prompt (`LanguageModelV4Prompt`) as chat messages in OpenAI's shape, the ones the
 * client's `chat.completions.create` reads.
 *
 * - system → `system`; user text parts → `user` (one part: its text; several: text parts, which
 *   the engine joins with "\n"); a file part anywhere is refused: the loaded model reads text only.
 * - assistant → `assistant`: its text parts concatenated, its tool calls as `tool_calls` (input as
 *   JSON text). Its reasoning parts are left out: the chat templates of thinking models drop the
 *   reasoning of earlier turns themselves.
 * - tool → one `tool` message per result, naming its call: text as it is, JSON as its JSON text,
 *   a denied call as its reason; a tool-approval response (provider-executed tools) is skipped.
 */
import type { LanguageModelV4Prompt, LanguageModelV4ToolResultOutput } from '@ai-sdk/provider';
import type { ChatMessageInput } from '../contract/index.ts';
import { invalidArgument, providerMessages } from './provider-errors.ts';

type ChatToolCallInput = { id: string; type: 'function'; function: { name: string; arguments: string } };

/** A tool call's input as the JSON text of its arguments (a string that already is JSON stays as it is). */
function argumentsText(input: unknown): string {
  if (typeof input === 'string') {
    try {
      JSON.parse(input);
      return input;
    } catch {
      return JSON.stringify(input);
    }
  }
  return JSON.stringify(input ?? {});
}

function toolOutputText(output: LanguageModelV4ToolResultOutput, at: string): string {
  switch (output.type) {
    case 'text':
    case 'error-text':
      return output.value;
    case 'json':
    case 'error-json':
      return JSON.stringify(output.value);
    case 'execution-denied':
      return output.reason ?? 'Tool call execution denied.';
    case 'content':
      return output.value
        .map((part, i) => {
          if (part.type === 'text') return part.text;
          if (part.type === 'file') throw invalidArgument(providerMessages.filePrompt(part.mediaType), `${at}.output.value[${i}]`);
          throw invalidArgument(providerMessages.customPrompt('tool output'), `${at}.output.value[${i}]`);
        })
        .join('\n');
    default: {
      const never: never = output;
      return never;
    }
  }
}

export function chatMessages(prompt: LanguageModelV4Prompt): ChatMessageInput[] {
  const messages: ChatMessageInput[] = [];
  prompt.forEach((message, m) => {
    switch (message.role) {
      case 'system':
        messages.push({ role: 'system', content: message.content });
        break;
      case 'user': {
        const texts = message.content.map((part, i) => {
          if (part.type === 'file') throw invalidArgument(providerMessages.filePrompt(part.mediaType), `prompt[${m}].content[${i}]`);
          return part.text;
        });
        messages.push({ role: 'user', content: texts.length === 1 ? texts[0]! : texts.map((text) => ({ type: 'text', text })) });
        break;
      }
      case 'assistant': {
        let text = '';
        const calls: ChatToolCallInput[] = [];
        message.content.forEach((part, i) => {
          switch (part.type) {
            case 'text':
              text += part.text;
              break;
            case 'tool-call':
              calls.push({ id: part.toolCallId, type: 'function', function: { name: part.toolName, arguments: argumentsText(part.input) } });
              break;
            case 'reasoning':
            case 'reasoning-file':
            case 'tool-result':
              // Reasoning of past turns is dropped (see above); there are no provider-executed tools.
              break;
            case 'file':
              throw invalidArgument(providerMessages.filePrompt(part.mediaType), `prompt[${m}].content[${i}]`);
            case 'custom':
              throw invalidArgument(providerMessages.customPrompt(part.kind), `prompt[${m}].content[${i}]`);
            default: {
              const never: never = part;
              return never;
            }
          }
        });
        messages.push(calls.length > 0 ? { role: 'assistant', content: text === '' ? null : text, tool_calls: calls } : { role: 'assistant', content: text });
        break;
      }
      case 'tool':
        message.content.forEach((part, i) => {
          if (part.type === 'tool-approval-response') return;
          messages.push({ role: 'tool', tool_call_id: part.toolCallId, content: toolOutputText(part.output, `prompt[${m}].content[${i}]`) });
        });
        break;
      default: {
        const never: never = message;
        return never;
      }
    }
  });
  return messages;
}
