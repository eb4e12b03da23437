/**
 * `extraction` rows (docs/extraction.md), in Node (onnxruntime-node, an in-process engine:
 * test/support/local-client.ts) on the generated 135M-shaped model (smollm2-135m-random, fp32):
 *
 * - For F = 1, 4, 16 fields on one state, from a cleared prefix cache each time: `shared_ms`, one
 *   request with the F fields (the state's cache computed once, each field branching from it), and
 *   `separate_ms`, F requests of one field each with the cache cleared before each (every field
 *   pays the state again: what a client without a shared state pays). `ms_per_field` =
 *   shared_ms / F; `speedup` = separate_ms / shared_ms; `fed_tokens_shared` and
 *   `fed_tokens_separate` the input tokens each way (usage), their ratio the token ceiling of
 *   sharing the state.
 * - The copy constraint's mask per decoding step (token-mask.ts over a suffix automaton of the
 *   state), median over a walk along the text, at 49k (smollm2), 152k (Qwen2.5) and 262k (Gemma 3)
 *   vocabularies; `first_ms` the first step (every token that occurs in the state).
 *
 * Run: `npx tsx bench/lib/extraction-rows.ts [--json FILE] [--reps N]`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import type { ExtractionResponse } from '../../src/contract/index.ts';
import { copyAutomaton, suffixAutomaton } from '../../src/engine/extraction/copy-automaton.ts';
import { bytesOf, tokenBytes } from '../../src/engine/extraction/token-bytes.ts';
import { allowedTokens } from '../../src/engine/extraction/token-mask.ts';
import { GENERATED } from '../../scripts/models/roots.ts';
import { loadEngine } from '../../test/support/models.ts';
import { localClient } from '../../test/support/local-client.ts';

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

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { json: { type: 'string' }, reps: { type: 'string', default: '3' } } });
  const reps = Number(values.reps);
  const { client } = await localClient(GENERATED, MODEL);
  const rows: Record<string, unknown>[] = [];
  for (const f of [1, 4, 16]) {
    const body = { model: 'jev', state: STATE, fields: fields(f) };
    const shared: number[] = [];
    const separate: number[] = [];
    let fedShared = 0;
    let fedSeparate = 0;
    for (let r = 0; r < reps; r++) {
      await client.cache.clear();
      let t0 = performance.now();
      const one = (await client.extractions.create(body)) as ExtractionResponse;
      shared.push(performance.now() - t0);
      fedShared = one.usage.input_tokens - (one.usage.input_tokens_details?.cached_tokens ?? 0);
      let total = 0;
      let fed = 0;
      for (const [key, field] of Object.entries(body.fields)) {
        await client.cache.clear();
        t0 = performance.now();
        const res = (await client.extractions.create({ ...body, fields: { [key]: field } })) as ExtractionResponse;
        total += performance.now() - t0;
        fed += res.usage.input_tokens;
      }
      separate.push(total);
      fedSeparate = fed;
    }
    const row = {
      fields: f,
      shared_ms: Math.round(median(shared)),
      separate_ms: Math.round(median(separate)),
      ms_per_field: Math.round(median(shared) / f),
      speedup: Number((median(separate) / median(shared)).toFixed(2)),
      fed_tokens_shared: fedShared,
      fed_tokens_separate: fedSeparate,
      reps,
    };
    rows.push(row);
    process.stdout.write(`${JSON.stringify(row)}\n`);
  }
  client.terminate();

  const masks: Record<string, unknown>[] = [];
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
    const row = { model: id, vocabulary: table.width, copy_mask_ms_per_step: Number(median(times.slice(1)).toFixed(2)), first_ms: Number(times[0]!.toFixed(1)), steps: times.length };
    masks.push(row);
    process.stdout.write(`${JSON.stringify(row)}\n`);
    await lm.dispose();
  }
  if (values.json) {
    mkdirSync(dirname(values.json), { recursive: true });
    writeFileSync(values.json, `${JSON.stringify({ extraction: rows, copy_mask: masks }, null, 2)}\n`);
  }
}

await main();
