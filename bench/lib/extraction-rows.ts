/**
 * `extraction` rows (docs/extraction.md), in Node (onnxruntime-node, an in-process engine:
 * test/support/local-client.ts, its sessions created with the server thread's rewrites,
 * src/server/node-session-rewrites.ts, as `jev-local serve` creates them) on the generated
 * 135M-shaped model (smollm2-135m-random, fp32):
 *
 * - For F = 1, 4, 16 fields on one state, from a cleared prefix cache each time: `shared_ms`, one
 *   request with the F fields (the state's cache computed once, each field branching from it), and
 *   `separate_ms`, F requests of one field each with the cache cleared before each (every field
 *   pays the state again: what a client without a shared state pays). `ms_per_field` =
 *   shared_ms / F; `speedup` = separate_ms / shared_ms; `fed_tokens_shared` and
 *   `fed_tokens_separate` every token the model reads each way (usage: input tokens not taken
 *   from the cache, and the value tokens decoded), `ceiling` their ratio (the token ceiling, as
 *   for decisions: docs/benchmarks.md) and `of_ceiling` = speedup / ceiling (target ≥ 0.9 at
 *   F ≥ 4). `decoded_tokens` the value tokens, the same both ways (each a pass of its own).
 * - The copy constraint's mask per decoding step (token-mask.ts over a suffix automaton of the
 *   state), median over a walk along the text, at 49k (smollm2), 152k (Qwen2.5) and 262k (Gemma 3)
 *   vocabularies; `first_ms` the first step (every token that occurs in the state).
 *
 * Run: `npm run bench -- --only extraction [--reps N] [--json FILE]`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ExtractionResponse } from '../../src/contract/index.ts';
import { copyAutomaton, suffixAutomaton } from '../../src/engine/extraction/copy-automaton.ts';
import { bytesOf, tokenBytes } from '../../src/engine/extraction/token-bytes.ts';
import { allowedTokens } from '../../src/engine/extraction/token-mask.ts';
import { commitId, machineDescription } from '../../scripts/machine/machine.ts';
import { GENERATED } from '../../scripts/models/roots.ts';
import { loadEngine } from '../../test/support/models.ts';
import { localClient } from '../../test/support/local-client.ts';
import { InferenceSession } from 'onnxruntime-node';
import { withNodeRewrites } from '../../src/server/node-session-rewrites.ts';
import type { CopyMaskRow, ExtractionRow } from './schema-feature-rows.ts';
import { median } from './schema.ts';

const MODEL = 'smollm2-135m-random';
const STATE =
  'Invoice INV-2024-117 from Müller & Söhne GmbH, Königstraße 12, 70173 Stuttgart. Issued 2024-02-01, due 2024-02-29. ' +
  'Total 1,234.50 EUR, VAT 19 %, 234.55 EUR. Contact: Dana Reyes, +49 711 555 0101, call back at 14:30. Delivery took 3 days.';
const KINDS = [
  { type: 'text', instructions: 'The vendor.' },
  { type: 'number', decimals: 2, unit: 'EUR' },
  { type: 'date' },
  { type: 'time' },
] as const;

function fields(f: number): Record<string, unknown> {
  return Object.fromEntries(Array.from({ length: f }, (_, i) => [`f${i}`, { ...KINDS[i % KINDS.length], instructions: `Field ${i}: ${KINDS[i % KINDS.length]!.type}.` }]));
}

/** Every token the model read for a response: input not taken from the cache, and the decoded value tokens. */
const readTokens = (r: ExtractionResponse) => r.usage.input_tokens - (r.usage.input_tokens_details?.cached_tokens ?? 0) + r.usage.output_tokens;

/** How a row's requests are made: one extraction request timed where the engine runs, and the prefix cache emptied. */
export interface ExtractionWay {
  extract(body: unknown): Promise<{ ms: number; response: ExtractionResponse }>;
  clear(): Promise<void>;
}

/** The bench's body for F fields on its invoice state. */
export function extractionBody(f: number): { model: string; state: string; fields: Record<string, unknown> } {
  return { model: 'jev', state: STATE, fields: fields(f) };
}

/**
 * The rows for F = 1, 4 and 16: F fields in one request against F one-field requests, each from a
 * cleared prefix cache, the two ways alternated; `where` names the engine (Node or the page).
 */
export async function fieldRows(way: ExtractionWay, reps: number, log: (...a: unknown[]) => void, where: ExtractionRow['where'], inPlace?: boolean): Promise<ExtractionRow[]> {
  const rows: ExtractionRow[] = [];
  for (const f of [1, 4, 16]) {
    const body = extractionBody(f);
    const shared: number[] = [];
    const separate: number[] = [];
    let fedShared = 0;
    let fedSeparate = 0;
    let decoded = 0;
    await way.extract(body); // warm-up: shapes, allocations, the tokenizer's memo
    // F = 16 costs minutes a repetition on 2 cores (random weights copy texts to their bound): a third of the repetitions.
    const rowReps = f >= 16 ? Math.max(1, Math.ceil(reps / 3)) : reps;
    for (let r = 0; r < rowReps; r++) {
      // The order of the two ways alternates, so a drift of the machine falls on both.
      const ways = [
        async () => {
          await way.clear();
          const one = await way.extract(body);
          shared.push(one.ms);
          fedShared = readTokens(one.response);
          decoded = one.response.usage.output_tokens;
        },
        async () => {
          let total = 0;
          let fed = 0;
          for (const [key, field] of Object.entries(body.fields)) {
            await way.clear();
            const one = await way.extract({ ...body, fields: { [key]: field } });
            total += one.ms;
            fed += readTokens(one.response);
          }
          separate.push(total);
          fedSeparate = fed;
        },
      ];
      if (r % 2) ways.reverse();
      for (const w of ways) await w();
    }
    const speedup = median(separate) / median(shared);
    const ceiling = fedSeparate / fedShared;
    const row: ExtractionRow = {
      where,
      fields: f,
      shared_ms: Math.round(median(shared)),
      separate_ms: Math.round(median(separate)),
      ms_per_field: Math.round(median(shared) / f),
      speedup: Number(speedup.toFixed(2)),
      fed_tokens_shared: fedShared,
      fed_tokens_separate: fedSeparate,
      decoded_tokens: decoded,
      ceiling: Number(ceiling.toFixed(2)),
      of_ceiling: Number((speedup / ceiling).toFixed(3)),
      reps: rowReps,
      ...(inPlace === undefined ? {} : { rows_in_place: inPlace }),
    };
    rows.push(row);
    log(`extraction (${where}) F=${f}: shared ${row.shared_ms} ms, separate ${row.separate_ms} ms: ${row.speedup}× of a ${row.ceiling}× token ceiling (${Math.round(row.of_ceiling * 100)} %)`);
  }
  return rows;
}

export async function measureExtraction(reps: number, log: (...a: unknown[]) => void): Promise<{ extraction: ExtractionRow[]; copy_mask: CopyMaskRow[] }> {
  const { client, engine } = await withNodeRewrites(InferenceSession as never, () => localClient(GENERATED, MODEL));
  const inPlace = engine.languageModel!.inPlaceRows;
  log(`extraction (node): ${MODEL} fp32 with the server's session rewrites; batched rows ${inPlace ? 'written in place' : 'returned whole each step'}`);
  const way: ExtractionWay = {
    async extract(body) {
      const t0 = performance.now();
      const response = (await client.extractions.create(body as never)) as ExtractionResponse;
      return { ms: performance.now() - t0, response };
    },
    clear: () => client.cache.clear(),
  };
  const rows = await fieldRows(way, reps, log, 'node', inPlace);
  client.terminate();

  const masks: CopyMaskRow[] = [];
  for (const id of ['smollm2-135m-random', 'tiny-random-qwen2', 'tiny-random-gemma3']) {
    const engine = await loadEngine(GENERATED, id);
    const lm = engine.languageModel!;
    const table = tokenBytes(lm);
    const text = new TextEncoder().encode(STATE.repeat(4));
    const machine = copyAutomaton(suffixAutomaton([text]), { maxBytes: 500 });
    let state = machine.start;
    let at = 0;
    const times: number[] = [];
    for (let step = 0; step < 24; step++) {
      const t0 = performance.now();
      const allowed = allowedTokens(table, machine, state);
      times.push(performance.now() - t0);
      // Go on with the longest allowed token that continues the text from `at`.
      let best = -1;
      let bestLen = 0;
      for (let i = 0; i < allowed.ids.length; i++) {
        const b = bytesOf(table, allowed.ids[i]!);
        if (b.length > bestLen && text.subarray(at, at + b.length).every((x, k) => x === b[k])) {
          best = i;
          bestLen = b.length;
        }
      }
      if (best < 0) break;
      state = allowed.after[best]!;
      at += bestLen;
    }
    const row: CopyMaskRow = { model: id, vocabulary: table.width, copy_mask_ms_per_step: Number(median(times.slice(1)).toFixed(2)), first_ms: Number(times[0]!.toFixed(1)), steps: times.length };
    masks.push(row);
    log(`copy mask ${id} (${row.vocabulary} tokens): ${row.copy_mask_ms_per_step} ms a step, first ${row.first_ms} ms`);
    await lm.dispose();
  }
  return { extraction: rows, copy_mask: masks };
}

/** The page's rows (extraction-page-rows.ts), measured by the caller, which serves the bench page. */
export type PageRows = (reps: number) => Promise<{ rows: ExtractionRow[]; threads: number | null; isolated: boolean }>;

export async function runExtractionOnly(json: string, log: (...a: unknown[]) => void, repo: string, reps = 3, page: PageRows | null = null): Promise<void> {
  const { extraction, copy_mask } = await measureExtraction(reps, log);
  const inPage = page ? await page(reps) : null;
  const result = {
    schema: 'jev-bench/1',
    machine: machineDescription(),
    commit: commitId(repo),
    date: new Date().toISOString(),
    extraction: [...extraction, ...(inPage?.rows ?? [])],
    ...(inPage ? { extraction_page: { threads: inPage.threads, cross_origin_isolated: inPage.isolated } } : {}),
    copy_mask,
  };
  mkdirSync(dirname(json), { recursive: true });
  writeFileSync(json, `${JSON.stringify(result, null, 2)}\n`);
  log(`wrote ${json}`);
}
