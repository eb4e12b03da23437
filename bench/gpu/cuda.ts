/**
 * `jev-local serve --device cuda` on a GPU machine (bench/gpu/README.md, "--device cuda"): the
 * server as a user starts it, its engine in-process on onnxruntime-node's CUDA provider, beside
 * the same server on the CPU provider, on the same model and format.
 *
 * For each format × device, one server process (`jev-local serve --model M --host DIR --device D
 * --dtype F`), then over HTTP:
 * - the answers of DECISIONS (noul, choice and score questions on three states): every number of
 *   every answer is compared with the CPU server's (the largest |Δ| is the row's `max_abs_diff`);
 * - a greedy chat reply of 32 tokens, compared as text;
 * - prefill and decode tok/s (served-timing.ts) and a cold decision's latency (a state never seen
 *   before, so the prefix cache skips nothing), medians of `--reps`;
 * - the GPU memory in use while the server is up (nvidia-smi), and onnxruntime's warnings in its log.
 * The server's own start line says where it runs ("in-process (onnxruntime-node cuda, fp32)"):
 * a row whose line does not name the device asked for fails.
 *
 * Writes `--json` and `--md` after every row, so that a run cut short keeps what it measured.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freshPrompt, servedSpeed, type ServedSpeed } from '../lib/served-timing.ts';
import { round } from '../lib/measure.ts';
import { median } from '../lib/schema.ts';

const { values } = parseArgs({
  options: {
    models: { type: 'string' },
    model: { type: 'string', default: 'smollm2-135m-random' },
    dtypes: { type: 'string', default: 'fp32,q8,q4' },
    devices: { type: 'string', default: 'cpu,cuda' },
    reps: { type: 'string', default: '3' },
    bin: { type: 'string' },
    json: { type: 'string', default: 'cuda.json' },
    md: { type: 'string', default: 'cuda.md' },
  },
});
if (!values.models) throw new Error('cuda: --models DIR (a folder in the hub layout) is required');
const reps = Number(values.reps);
/** The package's bin beside the bundle (the pack's jev-local.mjs), else the checkout's. */
const bin = values.bin ?? [new URL('./jev-local.mjs', import.meta.url), new URL('../../bin/jev-local.mjs', import.meta.url)].map((u) => fileURLToPath(u)).find((p) => existsSync(p))!;

const STATES = [
  'Order 5521 arrived with a cracked screen. The customer asks for a refund, not a replacement, and mentions they have been waiting two weeks.',
  'Hi team, the invoice for March was charged twice on our company card. Please fix it before Friday, our accountant is closing the books.',
  'The parcel tracking page has said "in transit" for nine days. Nobody answers the phone. I am starting to think it is lost.',
];
const QUESTIONS = {
  refund: { type: 'noul', instructions: 'Does the customer ask for their money back?' },
  team: { type: 'choice', instructions: 'Which team should answer?', criteria: { billing: 'Charges and invoices', shipping: 'Parcels and delivery', support: 'Anything else' } },
  anger: { type: 'score', instructions: 'How angry is the customer, 0 to 4?', criteria: ['calm', 'mildly annoyed', 'annoyed', 'angry', 'furious'] },
};
const CHAT = 'Write a short note to a neighbour about a lost cat.';

interface Row extends Partial<ServedSpeed> {
  model: string;
  dtype: string;
  device: string;
  /** What the server's start line said it runs on: "onnxruntime-node cuda, fp32". */
  served_on: string | null;
  decision_ms: number | null;
  /** GPU memory in use while this server is up and idle (nvidia-smi; one server runs at a time), against `gpu_baseline_mib` before any. */
  gpu_memory_mib: number | null;
  /** onnxruntime's warnings in the server's log (where it placed nodes on the CPU, say). */
  ort_warnings: string[];
  /** Largest |Δ| over every number of every answer against the CPU server's of the same format (CUDA rows). */
  max_abs_diff: number | null;
  numbers_compared: number | null;
  /** Largest |Δ| against the CPU server's answers at fp32 (the unquantized model): a quantized format's own error on this device. */
  max_abs_diff_fp32: number | null;
  /** Whether the greedy chat reply equals the CPU server's. */
  same_text: boolean | null;
  error: string | null;
}

const rows: Row[] = [];
const gpuBaseline = gpuMemoryUsed();
const answersOf = new Map<string, { numbers: Map<string, number>; text: string }>();

for (const dtype of values.dtypes!.split(',')) {
  for (const device of values.devices!.split(',')) {
    const row: Row = { model: values.model!, dtype, device, served_on: null, decision_ms: null, gpu_memory_mib: null, ort_warnings: [], max_abs_diff: null, numbers_compared: null, max_abs_diff_fp32: null, same_text: null, error: null };
    rows.push(row);
    let server: Served | null = null;
    try {
      server = await serve(['--model', values.model!, '--host', values.models, '--device', device, '--dtype', dtype, '--port', '0']);
      row.served_on = server.on;
      if (!server.on.startsWith(`onnxruntime-node ${device},`)) throw new Error(`the server says it runs on "${server.on}", not ${device}`);
      const numbers = new Map<string, number>();
      for (const [i, state] of STATES.entries()) {
        const answer = await post(server.url, '/inference/jev/api/alpha/decisions', { model: 'jev', state, questions: QUESTIONS });
        collectNumbers(answer['answers'], `state${i}`, numbers);
      }
      const chat = await post(server.url, '/v1/chat/completions', { model: 'jev', messages: [{ role: 'user', content: CHAT }], max_tokens: 32, temperature: 0 });
      const text = (chat['choices'] as { message: { content: string } }[])[0]!.message.content;
      answersOf.set(`${dtype}/${device}`, { numbers, text });
      const cpu = answersOf.get(`${dtype}/cpu`);
      if (device !== 'cpu' && cpu) {
        [row.max_abs_diff, row.numbers_compared] = maxAbsDiff(cpu.numbers, numbers);
        row.same_text = text === cpu.text;
      }
      const reference = answersOf.get('fp32/cpu');
      if (reference && !(dtype === 'fp32' && device === 'cpu')) row.max_abs_diff_fp32 = maxAbsDiff(reference.numbers, numbers)[0];
      Object.assign(row, await servedSpeed(server.url, reps));
      const decisions: number[] = [];
      for (let rep = 0; rep < reps; rep++) {
        const t = performance.now();
        await post(server.url, '/inference/jev/api/alpha/decisions', { model: 'jev', state: freshPrompt(5000 + rep, 96), questions: QUESTIONS });
        decisions.push(performance.now() - t);
      }
      row.decision_ms = round(median(decisions), 1);
      row.gpu_memory_mib = gpuMemoryUsed();
      row.ort_warnings = server.log().split('\n').filter((l) => /\[W:onnxruntime/.test(l)).slice(0, 4).map((l) => l.slice(0, 400));
    } catch (e) {
      row.error = `${(e as Error).message}${server ? `\n${server.log().slice(-1500)}` : ''}`;
    } finally {
      await server?.close();
    }
    console.log(JSON.stringify(row));
    write();
  }
}
process.exit(rows.some((r) => r.error) ? 1 : 0);

interface Served {
  url: string;
  on: string;
  process: ChildProcess;
  log(): string;
  close(): Promise<void>;
}

/** Starts `jev-local serve ARGS` and waits for its start line ("jev-local: serving M in-process (onnxruntime-node D, F) on URL"). */
function serve(args: string[]): Promise<Served> {
  const child = spawn(process.execPath, [bin, 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const close = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 5000).unref();
    });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start line within 300 s:\n${out.slice(-1500)}`)), 300_000);
    const read = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /serving \S+ in-process \(([^)]*)\) on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[2]!, on: m[1]!, process: child, log: () => out, close });
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`jev-local serve exited (${code}) before serving:\n${out.slice(-1500)}`));
    });
  });
}

async function post(url: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await res.json()) as Record<string, unknown>;
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(json).slice(0, 500)}`);
  return json;
}

/** The largest |Δ| between two answers' numbers (every path of `reference` must be in `other`), and how many were compared. */
function maxAbsDiff(reference: Map<string, number>, other: Map<string, number>): [number, number] {
  let max = 0;
  for (const [path, v] of reference) {
    const w = other.get(path);
    if (w === undefined) throw new Error(`the answers lack ${path}`);
    max = Math.max(max, Math.abs(v - w));
  }
  return [Number(max.toExponential(3)), reference.size];
}

/** Every number under `value`, keyed by its path. */
function collectNumbers(value: unknown, path: string, into: Map<string, number>): void {
  if (typeof value === 'number') into.set(path, value);
  else if (Array.isArray(value)) value.forEach((v, i) => collectNumbers(v, `${path}[${i}]`, into));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) collectNumbers(v, `${path}.${k}`, into);
}

/** The GPU memory in use (MiB), as nvidia-smi says; null without it. */
function gpuMemoryUsed(): number | null {
  try {
    return Number(execFileSync('nvidia-smi', ['--query-gpu=memory.used', '--format=csv,noheader,nounits'], { encoding: 'utf8' }).split('\n')[0]);
  } catch {
    return null;
  }
}

/** The last line of a message that says something (a failed server's own words come last). */
function lastLine(text: string): string {
  return text.split('\n').map((l) => l.trim()).filter(Boolean).at(-1) ?? '';
}

function write(): void {
  writeFileSync(values.json!, JSON.stringify({ model: values.model, reps, gpu_baseline_mib: gpuBaseline, rows }, null, 2));
  const cell = (v: unknown) => (v === null || v === undefined ? '—' : String(v));
  const lines = [
    `# jev-local serve --device cuda: ${values.model}, medians of ${reps}; GPU memory in use before any server: ${gpuBaseline ?? '—'} MiB`,
    '',
    '| format | device | served on | prefill tok/s | decode tok/s | cold decision ms | GPU MiB | max \\|Δ\\| vs cpu (numbers) | max \\|Δ\\| vs fp32 on cpu | same chat text | error |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map((r) =>
      `| ${r.dtype} | ${r.device} | ${cell(r.served_on)} | ${cell(r.prefill_tok_s)} | ${cell(r.decode_tok_s)} | ${cell(r.decision_ms)} | ${cell(r.gpu_memory_mib)} | ${r.max_abs_diff === null ? '—' : `${r.max_abs_diff} (${r.numbers_compared})`} | ${cell(r.max_abs_diff_fp32)} | ${cell(r.same_text)} | ${r.error ? lastLine(r.error).slice(0, 300) : ''} |`,
    ),
  ];
  writeFileSync(values.md!, `${lines.join('\n')}\n`);
}
