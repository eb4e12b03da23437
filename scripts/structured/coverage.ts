/**
 * `npx tsx scripts/structured/coverage.ts [--data DIR_OR_GIT] [--sets a,b] [--xgrammar N|all]
 * [--seed S] [--limit-ms MS] [--json FILE]`: declared coverage of the engine's JSON-schema
 * structured output on JSONSchemaBench's real-world schemas (docs/structured-output.md, "Coverage
 * on real-world schemas"), against the figures JSONSchemaBench's authors published for Guidance
 * (llguidance) and XGrammar.
 *
 * For each schema of each dataset (jsb-data.ts: a clone or a bare mirror, read through git, or a
 * folder of the datasets' JSON files), in a worker with a time limit (verdict-pool.ts): the
 * contract's check, then the compiler's lowering (schema-verdict.ts); both accepting is declared
 * coverage. Then, for every accepted schema, or `--xgrammar N` of them per dataset (a seeded,
 * deterministic sample), one cold compile by the engine's grammar worker for the SmolLM2-shaped
 * generated model's vocabulary (xgrammar-stage.ts): an accepted schema that does not compile is a
 * defect (a 400 from xgrammar, a 422 at a bound, or a 5xx at request time), listed one by one.
 *
 * Get the data: `git clone https://github.com/guidance-ai/jsonschemabench` and pass
 * `--data path/to/jsonschemabench` (or its `data/` folder). Never vendored here (90 MB).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DEFAULT_COMPILE_MS } from '../../src/engine/grammar/worker-grammar-backend.ts';
import type { JsonSchema } from '../../src/contract/index.ts';
import { Xoshiro128 } from '../models/prng.ts';
import { REPO } from '../models/roots.ts';
import { coverageTable, defectLines, keywordLines, PUBLISHED_SOURCE, summarize, type SchemaRecord } from './coverage-report.ts';
import { describeSource, jsbSource, listSets, readSet, type JsbFile } from './jsb-data.ts';
import { VerdictPool } from './verdict-pool.ts';
import { XGRAMMAR_MODEL, XGrammarStage } from './xgrammar-stage.ts';

const MIRROR = '/work/.mirror/guidance-ai+jsonschemabench/repo';

const { values } = parseArgs({
  options: {
    data: { type: 'string', default: process.env['JSB_DATA'] ?? (existsSync(MIRROR) ? MIRROR : 'jsonschemabench') },
    sets: { type: 'string' },
    xgrammar: { type: 'string', default: 'all' },
    seed: { type: 'string', default: '57' },
    'limit-ms': { type: 'string', default: String(DEFAULT_COMPILE_MS) },
    json: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log('npx tsx scripts/structured/coverage.ts [--data DIR_OR_GIT] [--sets a,b] [--xgrammar N|all|0] [--seed S] [--limit-ms MS] [--json FILE]');
  process.exit(0);
}
const sample = values.xgrammar === 'all' ? Infinity : Number(values.xgrammar);
if (!(sample === Infinity || (Number.isInteger(sample) && sample >= 0))) throw new Error(`--xgrammar must be a count (0: none) or all, got ${values.xgrammar}`);
const seed = Number(values.seed);
const limitMs = Number(values['limit-ms']);
if (!Number.isInteger(seed)) throw new Error(`--seed must be an integer, got ${values.seed}`);
if (!(limitMs > 0)) throw new Error(`--limit-ms must be positive, got ${values['limit-ms']}`);

const src = jsbSource(values.data!);
const available = listSets(src);
const sets = values.sets ? values.sets.split(',') : available;
for (const s of sets) if (!available.includes(s)) throw new Error(`no dataset ${s} in ${describeSource(src)} (it has ${available.join(', ')})`);
const log = (line: string) => console.log(line);
const started = Date.now();
log(`JSONSchemaBench coverage: ${describeSource(src)}; datasets ${sets.join(', ')}; lowering limit ${limitMs} ms; xgrammar ${sample === Infinity ? 'every accepted schema' : sample === 0 ? 'skipped' : `${sample} accepted schemas per dataset (seed ${seed})`}`);

// 1–2. The contract's check and the compiler's lowering, every schema.
const records = new Map<string, SchemaRecord[]>();
/** The accepted schemas, for the xgrammar check. */
const schemas = new Map<string, JsonSchema>();
const pool = new VerdictPool(limitMs);
try {
  for (const set of sets) {
    const t0 = Date.now();
    const files: JsbFile[] = await readSet(src, set);
    const out: SchemaRecord[] = [];
    for (const f of files) {
      const verdict = f.error !== undefined ? ({ stage: 'unreadable', reason: f.error } as const) : await pool.verdict(f.schema);
      out.push({ set, name: f.name, bytes: f.bytes, verdict });
      if (verdict.stage === 'accepted' && sample > 0) schemas.set(`${set}/${f.name}`, f.schema as JsonSchema);
      if (verdict.stage === 'timeout' || verdict.stage === 'crash') log(`  ${set}/${f.name}: ${verdict.stage}: ${verdict.reason}`);
    }
    records.set(set, out);
    const accepted = out.filter((r) => r.verdict.stage === 'accepted').length;
    log(`${set}: ${out.length} schemas, ${accepted} accepted (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  }
} finally {
  pool.close();
}

// 3. xgrammar, on the accepted schemas (all, or a seeded sample per dataset).
let vocabulary: number | null = null;
if (sample > 0) {
  const stage = await XGrammarStage.open();
  vocabulary = stage.vocabularySize;
  try {
    for (const set of sets) {
      const t0 = Date.now();
      const accepted = records.get(set)!.filter((r) => r.verdict.stage === 'accepted');
      const picked = sample === Infinity ? accepted : seededSample(accepted, sample, seed);
      let done = 0;
      for (const r of picked) {
        r.xgrammar = await stage.compile(readSchema(r));
        if (!r.xgrammar.ok) log(`  DEFECT ${set}/${r.name}: ${r.xgrammar.kind}: ${r.xgrammar.message.slice(0, 200)}`);
        if (++done % 50 === 0) log(`  ${set}: ${done}/${picked.length} compiled (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
      }
      log(`${set}: xgrammar ${picked.filter((r) => r.xgrammar?.ok).length}/${picked.length} compiled (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    }
  } finally {
    await stage.close();
  }
}

const sums = sets.map((s) => summarize(s, records.get(s)!));
const commit = spawnSync('git', ['-C', REPO, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim();
log('');
log(`Declared coverage (contract ∧ compiler accept) per dataset; † = refused by the compiler (the rest by the contract). Published: ${PUBLISHED_SOURCE}.`);
for (const line of coverageTable(sums)) log(line);
log('');
log('Refusals by keyword, all datasets (commonest message):');
for (const line of keywordLines(sums)) log(`  ${line}`);
const defects = defectLines(sums);
log('');
log(`Accepted but not compiled by xgrammar (defects): ${defects.length}${defects.length ? '' : ' (none)'}`);
for (const line of defects) log(`  ${line}`);
log(`\n${((Date.now() - started) / 1000).toFixed(0)} s in all; commit ${commit}`);

if (values.json) {
  const report = {
    date: new Date().toISOString(),
    commit,
    source: describeSource(src),
    model: XGRAMMAR_MODEL,
    vocabulary,
    limit_ms: limitMs,
    xgrammar_sample: sample === Infinity ? 'all' : sample,
    seed,
    published_source: PUBLISHED_SOURCE,
    sets: sums,
    schemas: [...records.values()].flat().map((r) => ({ set: r.set, name: r.name, bytes: r.bytes, verdict: r.verdict, xgrammar: r.xgrammar })),
  };
  writeFileSync(values.json, `${JSON.stringify(report, null, 1)}\n`);
  log(`written ${values.json}`);
}

/** `n` of `items`, the same ones for the same seed: a seeded Fisher–Yates shuffle's first `n`, in their original order. */
function seededSample<T>(items: readonly T[], n: number, s: number): T[] {
  if (n >= items.length) return [...items];
  const rng = new Xoshiro128(s);
  const idx = items.map((_, i) => i);
  for (let i = idx.length - 1; i > 0; i--) {
    const j = rng.nextInt(i + 1);
    [idx[i], idx[j]] = [idx[j]!, idx[i]!];
  }
  return idx.slice(0, n).sort((a, b) => a - b).map((i) => items[i]!);
}

/** The schema of an accepted record. */
function readSchema(r: SchemaRecord): JsonSchema {
  return schemas.get(`${r.set}/${r.name}`)!;
}
