/**
 * `npm run fetch-model -- <model id> [--host URL] [--out DIR] [--dtype fp32,q8,…|all]`
 *
 * Downloads the files a model needs from the hub (or any host in the hub layout) into
 * `DIR/<model id>/resolve/main/…`, a folder that any static server (with CORS) serves as a
 * model host: `?host=http://your-server&model=<model id>`. A graph's external data (`onnx/<file>_data`,
 * `_data_1`, …, as `transformers.js_config.use_external_data_format` in config.json declares it) comes
 * with it, checked like every other file.
 */
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { externalDataFiles } from '../src/engine/load/external-data.ts';

export const DTYPE_FILES: Record<string, string> = {
  fp32: 'onnx/model.onnx',
  fp16: 'onnx/model_fp16.onnx',
  q8: 'onnx/model_quantized.onnx',
  q4: 'onnx/model_q4.onnx',
  q4f16: 'onnx/model_q4f16.onnx',
};
const CONFIG_FILES = ['config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json'];
const REQUIRED = new Set(['config.json', 'tokenizer.json', 'tokenizer_config.json']);

export interface FetchModelOptions {
  model: string;
  host?: string;
  out?: string;
  /** Which ONNX variants to fetch; `all` (default) takes every one the model offers. */
  dtypes?: string[] | 'all';
  log?: (line: string) => void;
}

export interface FetchedFile {
  file: string;
  bytes: number;
  sha256: string;
}

export async function fetchModel(options: FetchModelOptions): Promise<FetchedFile[]> {
  const host = (options.host ?? 'https://huggingface.co').replace(/\/+$/, '');
  const out = resolve(options.out ?? 'models-mirror');
  const log = options.log ?? (() => {});
  const base = `${host}/${options.model}/resolve/main/`;
  const wanted = options.dtypes === undefined || options.dtypes === 'all' ? Object.keys(DTYPE_FILES) : options.dtypes;
  for (const d of wanted) if (!DTYPE_FILES[d]) throw new Error(`Unknown dtype ${d}; use one of ${Object.keys(DTYPE_FILES).join(', ')} or all.`);

  const listed = await listFiles(host, options.model);
  const onnx = wanted.map((d) => DTYPE_FILES[d]!);
  const fetched: FetchedFile[] = [];
  const get = async (file: string): Promise<Response | null> => {
    const res = await fetch(base + file).catch((e: Error) => {
      throw new Error(`GET ${base + file}: no answer from ${host} (${(e.cause as { code?: string } | undefined)?.code ?? e.message}).`);
    });
    if (res.status === 404) {
      if (REQUIRED.has(file)) throw new Error(`${options.model} has no ${file} at ${host}.`);
      return null;
    }
    if (!res.ok) throw new Error(`GET ${base + file}: HTTP ${res.status}`);
    return res;
  };

  // config.json first: it declares the external data (`<graph>_data`, `_data_1`, …) of each graph.
  const configResponse = await get('config.json');
  const configBody = Buffer.from(await configResponse!.arrayBuffer());
  let config: unknown;
  try {
    config = JSON.parse(configBody.toString('utf8'));
  } catch {
    throw new Error(`${options.model}'s config.json at ${host} is not JSON.`);
  }
  await store('config.json', configResponse!, configBody);
  const declared = new Set(onnx.flatMap((o) => externalDataFiles(config, o)));
  // External weights travel with their graph: those config.json declares, and those the listing names.
  const listedData = (listed ?? []).filter((f) => onnx.some((o) => f.startsWith(`${o}_data`)));
  const candidates = [...CONFIG_FILES.filter((f) => f !== 'config.json'), ...onnx, ...declared, ...listedData.filter((f) => !declared.has(f))];
  const files = listed ? candidates.filter((f) => listed.includes(f) || declared.has(f)) : candidates;

  for (const file of files) {
    const res = await get(file);
    if (!res) {
      // A graph the model lacks is skipped; its declared external data, once the graph is there, is not optional.
      const graph = onnx.find((o) => declared.has(file) && file.startsWith(`${o}_data`));
      if (graph && fetched.some((f) => f.file === graph)) throw new Error(`${options.model} at ${host} has ${graph} but not ${file}, which its config.json declares.`);
      continue;
    }
    await store(file, res);
  }
  if (!fetched.some((f) => f.file.startsWith('onnx/'))) throw new Error(`${options.model} offers none of ${onnx.join(', ')} at ${host}.`);
  return fetched;

  async function store(file: string, res: Response, known?: Buffer): Promise<void> {
    const body = known ?? Buffer.from(await res.arrayBuffer());
    const length = Number(res.headers.get('content-length') ?? NaN);
    if (Number.isFinite(length) && length !== body.byteLength) throw new Error(`${file}: got ${body.byteLength} bytes of ${length}`);
    const sha256 = createHash('sha256').update(body).digest('hex');
    const stated = (res.headers.get('x-linked-etag') ?? '').replace(/^W\//, '').replace(/"/g, '');
    if (/^[0-9a-f]{64}$/.test(stated) && stated !== sha256) throw new Error(`${file}: SHA-256 ${sha256} differs from the host's ${stated}`);
    const target = join(out, options.model, 'resolve', 'main', file);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, body);
    fetched.push({ file, bytes: body.byteLength, sha256 });
    log(`${file}  ${body.byteLength} bytes  sha256 ${sha256.slice(0, 16)}…`);
  }
}

/** The hub's file listing (`/api/models/{id}`), or null where the host has none (a plain mirror). */
async function listFiles(host: string, model: string): Promise<string[] | null> {
  const res = await fetch(`${host}/api/models/${model}`).catch(() => null);
  if (!res?.ok) return null;
  const body = (await res.json().catch(() => null)) as { siblings?: { rfilename: string }[] } | null;
  return body?.siblings?.map((s) => s.rfilename) ?? null;
}

function parseArgs(argv: string[]): FetchModelOptions {
  const opts: FetchModelOptions = { model: '', log: (l) => console.log(l) };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--host') opts.host = argv[++i]!;
    else if (a === '--out') opts.out = argv[++i]!;
    else if (a === '--dtype') opts.dtypes = argv[++i] === 'all' ? 'all' : argv[i]!.split(',');
    else if (!a.startsWith('--')) opts.model = a;
    else throw new Error(`Unknown option ${a}`);
  }
  if (!opts.model) throw new Error('Usage: npm run fetch-model -- <model id> [--host URL] [--out DIR] [--dtype fp32,q8,…|all]');
  return opts;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  fetchModel(parseArgs(process.argv.slice(2))).then(
    (files) => console.log(`${files.length} files written.`),
    (e: Error) => {
      console.error(e.message);
      process.exit(1);
    },
  );
}
