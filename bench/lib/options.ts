/** The options of `npm run bench` (bench/run.ts) and their parsing. */
import { join } from 'node:path';
import { REPO } from '../../scripts/models/roots.ts';
import { FORMAT_DTYPES, type FormatDtype } from './formats.ts';

export interface BenchOptions {
  json: string;
  md: string | null;
  quick: boolean;
  webgpu: boolean;
  models: string[] | null;
  threads: number | undefined;
  states: number[] | null;
  reps: number | null;
  peers: boolean;
  peerReps: number | null;
  dtypes: FormatDtype[];
  formats: boolean;
  gqa: boolean;
  /** The decision / chat grid against the baselines (off: format rows and peers only). */
  grid: boolean;
  /** The logits-bound memory rows on a big-vocabulary model (bench/lib/logits-rows.ts). */
  logits: boolean;
  /** The `structured` rows: chat under a JSON schema against chat without one (bench/lib/structured-rows.ts). */
  structured: boolean;
  /** The `tabs` rows: renderers' memory with 1, 2 and 4 tabs sharing one engine, against independent ones (bench/lib/tabs-rows.ts). */
  tabs: boolean;
  /** With `--only extraction`: the page's rows beside Node's (bench/lib/extraction-page-rows.ts; `--no-page`: Node's alone). */
  page: boolean;
  /**
   * `--only serve`: only the server-overhead rows (bench/lib/serve-rows.ts, docs/scale-out.md), in Node;
   * `--only structured`: only the structured rows, in Chromium; `--only tabs`: only the tabs rows;
   * `--only ort-builds`: onnxruntime-web's JSPI build against its asyncify build, decode and prefill (bench/lib/ort-build-rows.ts);
   * `--only sampler`: the time to choose a token from a row of logits, per vocabulary size and path, in Node (bench/lib/sampler-rows.ts);
   * `--only load`: an app's start-up, first and return visits in one persistent profile, per dtype (bench/lib/load-visit-rows.ts; `--reps N` return visits);
   * `--only decisions-openai`: OpenAI's Decisions shape against the Jev shape for the same request, in Node (bench/lib/decisions-openai-rows.ts);
   * `--only extraction`: F fields sharing the state against one request per field, and the copy mask per step, in Node (bench/lib/extraction-rows.ts).
   */
  only: Only | null;
  /** `--max-load L` (ort-builds rows): before each measurement, wait up to 30 s for the 1-minute load average to drop below L. */
  maxLoad: number | undefined;
}

export const ONLY = ['serve', 'structured', 'tabs', 'ort-builds', 'sampler', 'load', 'decisions-openai', 'extraction'] as const;
export type Only = (typeof ONLY)[number];

export function parseBenchArgs(argv: string[]): BenchOptions {
  const o: BenchOptions = { json: '', md: join(REPO, 'docs/benchmarks.md'), quick: false, webgpu: false, models: null, threads: undefined, states: null, reps: null, peers: true, peerReps: null, dtypes: [...FORMAT_DTYPES], formats: true, gqa: true, grid: true, logits: true, structured: true, tabs: true, page: true, only: null, maxLoad: undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--json') o.json = value();
    else if (a === '--md') o.md = value();
    else if (a === '--no-md') o.md = null;
    else if (a === '--quick') o.quick = true;
    else if (a === '--webgpu') o.webgpu = true;
    else if (a === '--models') o.models = value().split(',');
    else if (a === '--threads') o.threads = Number(value());
    else if (a === '--states') o.states = value().split(',').map(Number);
    else if (a === '--reps') o.reps = Number(value());
    else if (a === '--no-peers') o.peers = false;
    else if (a === '--peer-reps') o.peerReps = Number(value());
    else if (a === '--dtypes') {
      o.dtypes = value().split(',') as FormatDtype[];
      const bad = o.dtypes.filter((d) => !FORMAT_DTYPES.includes(d));
      if (bad.length) throw new Error(`--dtypes: unknown ${bad.join(', ')}; known: ${FORMAT_DTYPES.join(', ')}`);
    } else if (a === '--no-formats') o.formats = false;
    else if (a === '--no-gqa') o.gqa = false;
    else if (a === '--no-grid') o.grid = false;
    else if (a === '--no-logits') o.logits = false;
    else if (a === '--no-structured') o.structured = false;
    else if (a === '--no-tabs') o.tabs = false;
    else if (a === '--no-page') o.page = false;
    else if (a === '--max-load') o.maxLoad = Number(value());
    else if (a === '--only') {
      const only = value();
      if (!(ONLY as readonly string[]).includes(only)) throw new Error(`--only: unknown ${only}; known: ${ONLY.join(', ')}`);
      o.only = only as Only;
    }
    else if (a === '--help' || a === '-h') {
      console.log(
        'usage: npm run bench -- --json FILE [--quick] [--webgpu] [--models smollm2-135m-random,TinyStories-656K,tiny-random-llama] [--threads N] ' +
          `[--states 64,512] [--reps N] [--dtypes fp32,fp16,q4,q4f16,q8] [--no-grid] [--no-formats] [--no-gqa] [--no-peers] [--peer-reps N] [--no-logits] [--no-structured] [--no-tabs] [--no-page] [--md FILE | --no-md] [--only ${ONLY.join('|')} [--max-load L]]`,
      );
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  if (!o.json) o.json = join(REPO, 'bench-results', `bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  return o;
}
