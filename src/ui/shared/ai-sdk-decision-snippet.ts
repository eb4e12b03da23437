/**
 * The decision on screen through the AI SDK provider (`jev-local/ai-sdk`): the unmodified
 * `experimental_decide` over `jevLocal(client).decisionModel('jev')`, which calls the engine in
 * the page (no HTTP, no service worker). The provider's mapping (ai-sdk/decision-input.ts) is the
 * inverse of this one, so the engine reads the same request:
 * - `noul` → `boolean`, with its true/false descriptions as `criteria`; `choice` and `score` as
 *   they are;
 * - the Jev shape's extensions `calibrate`, `calibration` and `prediction_set` go in
 *   `providerOptions.jev`.
 */
import { IN_PAGE_CLIENT, indentJson } from './snippet-code.ts';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const EXTENSIONS = ['calibrate', 'calibration', 'prediction_set'] as const;

/** The AI SDK's `questions` for the Jev request's, and the provider options its extensions become. */
export function toAiSdkDecideCall(jev: unknown): { state: unknown; questions: Json; providerOptions: Json | null } {
  const request = isObject(jev) ? jev : {};
  const questions: Json = {};
  for (const [key, q] of Object.entries(isObject(request['questions']) ? request['questions'] : {})) {
    questions[key] = isObject(q) && q['type'] === 'noul' ? { ...q, type: 'boolean' } : q;
  }
  const jevOptions: Json = {};
  for (const name of EXTENSIONS) if (request[name] !== undefined) jevOptions[name] = request[name];
  return { state: request['state'] ?? '', questions, providerOptions: Object.keys(jevOptions).length > 0 ? { jev: jevOptions } : null };
}

/** `experimental_decide`'s code for the decision on screen. */
export function aiSdkDecisionCode(jev: unknown): string {
  const { state, questions, providerOptions } = toAiSdkDecideCall(jev);
  return [
    `import { experimental_decide } from 'ai';`,
    `import { jevLocal } from 'jev-local/ai-sdk';`,
    ``,
    ...IN_PAGE_CLIENT,
    `const { answers, usage } = await experimental_decide({`,
    `  model: jevLocal(client).decisionModel('jev'),`,
    `  state: ${indentJson(state, '  ')},`,
    `  questions: ${indentJson(questions, '  ')},`,
    ...(providerOptions ? [`  providerOptions: ${indentJson(providerOptions, '  ')},`] : []),
    `});`,
    `console.log(answers, usage);`,
  ].join('\n');
}
