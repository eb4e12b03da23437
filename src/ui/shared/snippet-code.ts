/**
 * The pieces every snippet is written from: the snippet's type, the key the page accepts, JSON
 * indented into code, and the curl and fetch forms of a POST to this page's origin (where the
 * service worker answers).
 */
export type SnippetKind = 'curl' | 'fetch' | 'openai' | 'openai-decisions' | 'facade' | 'ai-sdk';

export interface Snippet {
  kind: SnippetKind;
  label: string;
  code: string;
}

/** Any key is accepted unless the page was set up with one. */
export const KEY = 'local';

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** `value` as JSON, its lines after the first indented by `indent` (to sit inside code). */
export function indentJson(value: unknown, indent: string): string {
  return JSON.stringify(value, null, 2).replace(/\n/g, `\n${indent}`);
}

export function curl(url: string, body: unknown): string {
  const stream = typeof body === 'object' && body !== null && (body as { stream?: unknown }).stream === true;
  return [
    `curl ${stream ? '-N ' : ''}${url} \\`,
    `  -H 'Content-Type: application/json' \\`,
    `  -H 'Authorization: Bearer ${KEY}' \\`,
    `  -d ${shellQuote(JSON.stringify(body, null, 2))}`,
  ].join('\n');
}

/** What a streamed chunk's line prints: the text, or (with tools) a tool call's pieces when it carries them. */
export function printDelta(chunk: string, tools: boolean): string {
  return tools ? `console.log(${chunk}.choices[0]?.delta?.tool_calls ?? ${chunk}.choices[0]?.delta?.content ?? '')` : `console.log(${chunk}.choices[0]?.delta?.content ?? '')`;
}

export const hasTools = (body: unknown): boolean => typeof body === 'object' && body !== null && Array.isArray((body as { tools?: unknown }).tools);

export function fetchCode(url: string, body: unknown, stream: boolean): string {
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

/** The line an in-page snippet starts from: the client this tab made, or the one an app makes. */
export const IN_PAGE_CLIENT = [
  `// The engine in this page, no HTTP: in your app, createClient({ model, host }) from 'jev-local';`,
  `// in this tab's console, the playground's own client.`,
  `const client = window.jev;`,
];
