/**
 * The decision on screen in OpenAI's Decisions shape (`openai.decisions.create`, `POST
 * /v1/decisions`), as the `openai` client sends it to this page's origin. The mapping is the
 * inverse of the server's adapter (contract/openai-decision-adapter.ts), so the engine reads the
 * same prompt and gives the same numbers as the Jev request, question by question:
 * - each question keeps its key as `name`, in the request's order;
 * - `noul` → `predicate` with its instructions. A predicate has no true/false descriptions: where
 *   the draft gives them they are left out (a comment in the code says which), and that
 *   question's numbers are those of the same question without them;
 * - `choice` → `choices: [{ value: key, description? }]` (string values, the keys' order);
 * - `score` → `levels: [{ label }]`, in order;
 * - the extensions `calibrate` and `calibration` pass through as they are; `prediction_set` is
 *   the Jev shape's only, left out with a comment.
 */
import { indentJson, KEY } from './snippet-code.ts';

type Json = Record<string, unknown>;

export interface OpenAIDecisionBody {
  body: Json;
  /** Keys of yes/no questions whose true/false descriptions OpenAI's predicate cannot carry. */
  droppedCriteria: string[];
  /** Whether the Jev request asked for a prediction set, which this shape has no field for. */
  droppedPredictionSet: boolean;
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const described = (d: unknown): d is string => typeof d === 'string' && d !== '';

function toOpenAIQuestion(name: string, q: Json, dropped: string[]): Json {
  const instructions = typeof q['instructions'] === 'string' ? q['instructions'] : '';
  const criteria = q['criteria'];
  switch (q['type']) {
    case 'noul':
      if (isObject(criteria) && (described(criteria['true']) || described(criteria['false']))) dropped.push(name);
      return { type: 'predicate', name, instructions };
    case 'choice':
      return {
        type: 'choice',
        name,
        instructions,
        choices: Object.entries(isObject(criteria) ? criteria : {}).map(([value, d]) => (described(d) ? { value, description: d } : { value })),
      };
    case 'score':
      return { type: 'score', name, instructions, levels: (Array.isArray(criteria) ? criteria : []).map((label) => ({ label })) };
    default:
      // A type the draft cannot hold: passed on as it is, so the server names what is wrong.
      return { ...q, name };
  }
}

/** The OpenAI Decisions body for a Jev decision request (`{ model, state, questions, … }`). */
export function toOpenAIDecisionBody(jev: unknown): OpenAIDecisionBody {
  const request = isObject(jev) ? jev : {};
  const droppedCriteria: string[] = [];
  const questions = Object.entries(isObject(request['questions']) ? request['questions'] : {}).map(([name, q]) =>
    toOpenAIQuestion(name, isObject(q) ? q : {}, droppedCriteria),
  );
  const body: Json = { model: request['model'] ?? 'jev', input: request['state'] ?? '', questions };
  if (request['calibrate'] !== undefined) body['calibrate'] = request['calibrate'];
  if (request['calibration'] !== undefined) body['calibration'] = request['calibration'];
  return { body, droppedCriteria, droppedPredictionSet: request['prediction_set'] !== undefined };
}

/** The `openai` client's code for the decision on screen, sent to `origin`. */
export function openaiDecisionCode(origin: string, jev: unknown): string {
  const { body, droppedCriteria, droppedPredictionSet } = toOpenAIDecisionBody(jev);
  const notes: string[] = [];
  if (droppedCriteria.length > 0) {
    notes.push(`// A predicate has no true/false descriptions: those of ${droppedCriteria.map((k) => JSON.stringify(k)).join(', ')} are not sent.`);
  }
  if (droppedPredictionSet) notes.push(`// prediction_set is the Jev shape's only (the curl and fetch forms): not sent here.`);
  if (body['calibrate'] !== undefined || body['calibration'] !== undefined) notes.push(`// calibrate and calibration are this server's extensions of the shape.`);
  return [
    `import OpenAI from 'openai';`,
    ``,
    `const openai = new OpenAI({`,
    `  baseURL: '${origin}/v1',`,
    `  apiKey: '${KEY}',`,
    `  dangerouslyAllowBrowser: true, // the model runs in this browser; the key is not a secret`,
    `});`,
    ...notes,
    `const decision = await openai.decisions.create(${indentJson(body, '')});`,
    `console.log(decision.answers); // in question order, each with its name`,
  ].join('\n');
}
