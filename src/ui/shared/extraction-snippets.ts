/**
 * Code for the extraction on screen (`{ model, state, fields, referenceDate? }`): `fetch` to this
 * page's origin (`POST /v1/extractions`, where the service worker answers), the facade in the page
 * (`client.extractions.create`), and the AI SDK's unmodified `experimental_extract` over
 * `jevLocal(client).extractionModel('jev')` (the engine in the page, no HTTP). The body is the same
 * in all three: the wire shape mirrors the AI SDK's call options.
 */
import { curl, fetchCode, IN_PAGE_CLIENT, indentJson, type Snippet } from './snippet-code.ts';

export const EXTRACTION_PATH = '/v1/extractions';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function facadeCode(body: unknown): string {
  return [
    ...IN_PAGE_CLIENT,
    `const controller = new AbortController(); // controller.abort() cancels the extraction`,
    `const { answers, usage } = await client.extractions.create(${indentJson(body, '')}, { signal: controller.signal });`,
    `console.log(answers, usage); // per field: value (or null), guess, pNull, confidence, source`,
  ].join('\n');
}

function aiSdkCode(body: unknown): string {
  const request = isObject(body) ? body : {};
  const lines = [
    `import { experimental_extract } from 'ai';`,
    `import { jevLocal } from 'jev-local/ai-sdk';`,
    ``,
    ...IN_PAGE_CLIENT,
    `const { answers, usage } = await experimental_extract({`,
    `  model: jevLocal(client).extractionModel('jev'),`,
    `  state: ${indentJson(request['state'] ?? '', '  ')},`,
    `  fields: ${indentJson(request['fields'] ?? {}, '  ')},`,
  ];
  if (typeof request['referenceDate'] === 'string') lines.push(`  referenceDate: ${JSON.stringify(request['referenceDate'])},`);
  lines.push(`});`, `console.log(answers, usage);`);
  return lines.join('\n');
}

export function extractionSnippets(origin: string, body: unknown): Snippet[] {
  const url = origin + EXTRACTION_PATH;
  return [
    { kind: 'fetch', label: 'fetch', code: fetchCode(url, body, false) },
    { kind: 'facade', label: 'client.extractions', code: facadeCode(body) },
    { kind: 'ai-sdk', label: 'experimental_extract', code: aiSdkCode(body) },
    { kind: 'curl', label: 'curl', code: curl(url, body) },
  ];
}
