/**
 * Code that sends the request on screen to this page's own origin, where the service worker
 * answers: curl and fetch for both endpoints, the `openai` client for chat only (a client for
 * chat completions cannot call the decision endpoint).
 */
export type SnippetKind = 'curl' | 'fetch' | 'openai';

export interface Snippet {
  kind: SnippetKind;
  label: string;
  code: string;
}

export const DECISION_PATH = '/inference/jev/api/alpha/decisions';
export const CHAT_PATH = '/v1/chat/completions';
/** Any key is accepted unless the page was set up with one. */
const KEY = 'local';

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

function indentJson(value: unknown, indent: string): string {
  return JSON.stringify(value, null, 2).replace(/\n/g, `\n${indent}`);
}

function curl(url: string, body: unknown): string {
  const stream = typeof body === 'object' && body !== null && (body as { stream?: unknown }).stream === true;
  return [
    `curl ${stream ? '-N ' : ''}${url} \\`,
    `  -H 'Content-Type: application/json' \\`,
    `  -H 'Authorization: Bearer ${KEY}' \\`,
    `  -d ${shellQuote(JSON.stringify(body, null, 2))}`,
  ].join('\n');
}

/** What a streamed chunk's line prints: the text, or (with tools) a tool call's pieces when it carries them. */
function printDelta(chunk: string, tools: boolean): string {
  return tools ? `console.log(${chunk}.choices[0]?.delta?.tool_calls ?? ${chunk}.choices[0]?.delta?.content ?? '')` : `console.log(${chunk}.choices[0]?.delta?.content ?? '')`;
}

const hasTools = (body: unknown): boolean => typeof body === 'object' && body !== null && Array.isArray((body as { tools?: unknown }).tools);

function fetchCode(url: string, body: unknown, stream: boolean): string {
  const call = [
    `const response = await fetch('${url}', {`,
    `  method: 'POST',`,
    `  headers: { 'Content-Type': 'application/json', Authorization: 'Bearer ${KEY}' },`,
    `  body: JSON.stringify(${indentJson(body, '  ')}),`,
    `});`,
    `if (!response.ok) throw new Error((await response.json()).error.message);`,
  ];
  if (!stream) return [...call, `console.log(await response.json());`].join('\n');
  return [
    ...call,
    `// Server-sent events: one "data: {chunk}" line per piece, then "data: [DONE]".`,
    `const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();`,
    `let buffered = '';`,
    `for (let r = await reader.read(); !r.done; r = await reader.read()) {`,
    `  buffered += r.value;`,
    `  const lines = buffered.split('\\n');`,
    `  buffered = lines.pop();`,
    `  for (const line of lines) {`,
    `    if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;`,
    `    ${printDelta('JSON.parse(line.slice(6))', hasTools(body))};`,
    `  }`,
    `}`,
  ].join('\n');
}

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
