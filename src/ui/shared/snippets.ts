/**
 * Code that sends the request on screen to this page's own origin, where the service worker
 * answers: curl and fetch for both endpoints; for chat the `openai` client's chat completions; for
 * decisions the same questions in OpenAI's Decisions shape (`openai.decisions.create`, `POST
 * /v1/decisions`) and through the AI SDK provider (`experimental_decide` over `jevLocal`), which
 * calls the engine in the page with no HTTP.
 */
import { aiSdkDecisionCode } from './ai-sdk-decision-snippet.ts';
import { openaiDecisionCode } from './openai-decision-snippet.ts';
import { curl, fetchCode, hasTools, indentJson, KEY, printDelta, type Snippet } from './snippet-code.ts';
export type { Snippet, SnippetKind } from './snippet-code.ts';

export const DECISION_PATH = '/inference/jev/api/alpha/decisions';
export const CHAT_PATH = '/v1/chat/completions';

function openaiCode(origin: string, body: Record<string, unknown>): string {
  const stream = body['stream'] === true;
  const lines = [
    `import OpenAI from 'openai';`,
    ``,
    `const client = new OpenAI({`,
    `  baseURL: '${origin}/v1',`,
    `  apiKey: '${KEY}',`,
    `  dangerouslyAllowBrowser: true, // the model runs in this browser; the key is not a secret`,
    `});`,
    `const ${stream ? 'stream' : 'completion'} = await client.chat.completions.create(${indentJson(body, '')});`,
  ];
  if (stream) lines.push(`for await (const chunk of stream) ${printDelta('chunk', hasTools(body))};`);
  else lines.push(`console.log(completion.choices[0].message${hasTools(body) ? '' : '.content'});`);
  return lines.join('\n');
}

export function decisionSnippets(origin: string, body: unknown): Snippet[] {
  const url = origin + DECISION_PATH;
  return [
    { kind: 'curl', label: 'curl', code: curl(url, body) },
    { kind: 'fetch', label: 'fetch', code: fetchCode(url, body, false) },
    { kind: 'openai-decisions', label: 'openai.decisions.create', code: openaiDecisionCode(origin, body) },
    { kind: 'ai-sdk', label: 'AI SDK', code: aiSdkDecisionCode(body) },
  ];
}

export function chatSnippets(origin: string, body: Record<string, unknown>): Snippet[] {
  const url = origin + CHAT_PATH;
  return [
    { kind: 'curl', label: 'curl', code: curl(url, body) },
    { kind: 'fetch', label: 'fetch', code: fetchCode(url, body, body['stream'] === true) },
    { kind: 'openai', label: 'openai client', code: openaiCode(origin, body) },
  ];
}
