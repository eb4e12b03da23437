/**
 * `decisions_openai` rows: OpenAI's Decisions shape (`POST /v1/decisions`) against the Jev shape for
 * the same request, in Node (onnxruntime-node, the generated tiny-random-llama, an in-process engine:
 * test/support/local-client.ts). For Q = 1, 4, 16 questions on one state, each repetition times, in
 * an order that rotates, from a cleared prefix cache each (so each call does the same work):
 * - `jev_ms`: the Jev request through `client.fetch` (`/inference/jev/api/alpha/decisions`);
 * - `openai_ms`: the same request in OpenAI's shape through `client.fetch` (`/v1/decisions`);
 * - `openai_method_ms`: the same through `client.decisions.createOpenAI`, no HTTP surface (what an
 *   in-page caller such as the AI SDK provider pays).
 * - `jev_again_ms`: the Jev request a second time in the same rotation, an A/A control: `noise_ratio`
 *   = jev_again / jev is what the machine's noise alone gives, the yardstick for `ratio`.
 * Medians; `ratio` = openai / jev (the adapter's cost: 1 within noise means the shape is free);
 * `http_saved_ms` = openai − openai_method (what skipping `client.fetch` saves). `same_answers`:
 * the OpenAI answers equal the Jev ones, bit for bit, on every repetition.
 *
 * Run: `npm run bench -- --only decisions-openai [--reps N] [--json FILE]` (docs/decisions.md).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import type { DecisionResponse, OpenAIDecision } from '../../src/contract/index.ts';
import type { JevClient } from '../../src/facade/jev-client.ts';
import { commitId, machineDescription } from '../../scripts/machine/machine.ts';
import { GENERATED, REPO } from '../../scripts/models/roots.ts';
import { localClient } from '../../test/support/local-client.ts';
import { round } from './measure.ts';
import { median } from './schema.ts';

export interface DecisionsOpenAIRow {
  questions: number;
  jev_ms: number;
  openai_ms: number;
  openai_method_ms: number;
  /** The Jev request again, in the same rotation: the A/A control. */
  jev_again_ms: number;
  /** openai_ms / jev_ms. */
  ratio: number;
  /** jev_again_ms / jev_ms: the ratio noise alone gives. */
  noise_ratio: number;
  /** openai_ms − openai_method_ms: the HTTP surface's share of an OpenAI-shape call. */
  http_saved_ms: number;
  same_answers: boolean;
  reps: number;
}

const STATE = 'My invoice was charged twice this month and support has not answered for a week. I want a refund today, or I cancel.';
const QUESTION_COUNTS = [1, 4, 16];

/** Q questions of the three types, in both shapes (the Jev keys are the OpenAI names). */
function requests(q: number): { jev: Record<string, unknown>; openai: Record<string, unknown> } {
  const jevQuestions: Record<string, unknown> = {};
  const oaQuestions: unknown[] = [];
  for (let i = 0; i < q; i++) {
    const name = `q${i}`;
    if (i % 3 === 0) {
      jevQuestions[name] = { type: 'noul', instructions: `Is the customer upset (${i})?` };
      oaQuestions.push({ type: 'predicate', name, instructions: `Is the customer upset (${i})?` });
    } else if (i % 3 === 1) {
      jevQuestions[name] = { type: 'choice', instructions: `Which team (${i})?`, criteria: { billing: 'Invoices', tech: null, sales: null } };
      oaQuestions.push({ type: 'choice', name, instructions: `Which team (${i})?`, choices: [{ value: 'billing', description: 'Invoices' }, { value: 'tech' }, { value: 'sales' }] });
    } else {
      jevQuestions[name] = { type: 'score', instructions: `How angry (${i})?`, criteria: ['calm', 'annoyed', 'angry'] };
      oaQuestions.push({ type: 'score', name, instructions: `How angry (${i})?`, levels: [{ label: 'calm' }, { label: 'annoyed' }, { label: 'angry' }] });
    }
  }
  return { jev: { model: 'jev', state: STATE, questions: jevQuestions }, openai: { model: 'jev', input: STATE, questions: oaQuestions } };
}

async function post(client: JevClient, path: string, body: unknown): Promise<unknown> {
  const res = await client.fetch(`http://localhost${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** The numbers of a Jev response, keyed, and of an OpenAI one, read the same way. */
function numbers(jev: DecisionResponse): unknown[] {
  return Object.entries(jev.answers).map(([, a]) => (a.type === 'noul' ? [a.noul] : Object.values(a.probabilities)));
}
function openaiNumbers(oa: OpenAIDecision): unknown[] {
  return oa.answers.map((a) => (a.type === 'predicate' ? [a.probability] : a.type === 'refusal' ? [] : a.probabilities.map((p) => p.probability)));
}

export async function measureDecisionsOpenAI(reps: number, log: (...a: unknown[]) => void): Promise<DecisionsOpenAIRow[]> {
  const { client } = await localClient(GENERATED, 'tiny-random-llama');
  const rows: DecisionsOpenAIRow[] = [];
  for (const q of QUESTION_COUNTS) {
    const { jev, openai } = requests(q);
    const ways = {
      jev: async () => numbers((await post(client, '/inference/jev/api/alpha/decisions', jev)) as DecisionResponse),
      again: async () => numbers((await post(client, '/inference/jev/api/alpha/decisions', jev)) as DecisionResponse),
      openai: async () => openaiNumbers((await post(client, '/v1/decisions', openai)) as OpenAIDecision),
      method: async () => openaiNumbers(await client.decisions.createOpenAI(openai)),
    };
    const names = Object.keys(ways) as (keyof typeof ways)[];
    const ms: Record<string, number[]> = { jev: [], again: [], openai: [], method: [] };
    let same = true;
    // Warm-up: shapes, allocations, the tokenizer's memo.
    for (let i = 0; i < 3; i++) for (const n of names) await ways[n]();
    for (let rep = 0; rep < reps; rep++) {
      const got: Record<string, unknown[]> = {};
      for (let k = 0; k < names.length; k++) {
        const n = names[(rep + k) % names.length]!;
        await client.cache.clear();
        const t0 = performance.now();
        got[n] = await ways[n]();
        ms[n]!.push(performance.now() - t0);
      }
      // Jev answers are keyed `q0`, `q1`… in request order; OpenAI's are in that order too.
      same &&= JSON.stringify(got['openai']) === JSON.stringify(got['jev']) && JSON.stringify(got['method']) === JSON.stringify(got['jev']);
    }
    const [j, o, m, a] = [median(ms['jev']!), median(ms['openai']!), median(ms['method']!), median(ms['again']!)];
    const row: DecisionsOpenAIRow = {
      questions: q,
      jev_ms: round(j, 3),
      openai_ms: round(o, 3),
      openai_method_ms: round(m, 3),
      jev_again_ms: round(a, 3),
      ratio: round(o / j, 3),
      noise_ratio: round(a / j, 3),
      http_saved_ms: round(o - m, 3),
      same_answers: same,
      reps,
    };
    log(`decisions_openai Q=${q}: jev ${row.jev_ms} ms, openai ${row.openai_ms} ms (×${row.ratio}; jev again ×${row.noise_ratio}), method ${row.openai_method_ms} ms; same answers: ${same}`);
    rows.push(row);
  }
  client.terminate();
  return rows;
}

export async function runDecisionsOpenAIOnly(json: string, log: (...a: unknown[]) => void, repo: string, reps = 30): Promise<void> {
  const decisions_openai = await measureDecisionsOpenAI(reps, log);
  const result = { schema: 'jev-bench/1', machine: machineDescription(), commit: commitId(repo), date: new Date().toISOString(), decisions_openai };
  mkdirSync(dirname(json), { recursive: true });
  writeFileSync(json, `${JSON.stringify(result, null, 2)}\n`);
  log(`wrote ${json}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { json: { type: 'string', default: 'bench-results/decisions-openai.json' }, reps: { type: 'string' } } });
  await runDecisionsOpenAIOnly(values.json, (...a) => console.log(...a), REPO, values.reps ? Number(values.reps) : undefined);
}
