/**
 * `jev-local serve --model ID [--host URL|DIR] [--device cpu|cuda] [--threads N] [--dtype D] [--cache-dir DIR] …`
 * (the engine in-process) and `jev-local serve --backend sglang|vllm --backend-url URL --model ID …`
 * (a relay to a serving engine): CONTRACT §1; docs/server.md.
 */
import { cpus, homedir } from 'node:os';
import { join } from 'node:path';
import type { DtypeChoice } from '../protocol/engine-api.ts';
import { DEFAULT_HOST } from '../facade/defaults.ts';
import { DEFAULT_MAX_QUEUED } from '../facade/admission.ts';

export type BackendKind = 'sglang' | 'vllm';

/** Where the embedded engine runs: onnxruntime-node's CPU execution provider, or its CUDA one. */
export type ServeDevice = 'cpu' | 'cuda';

export interface ServeOptions {
  /** The serving engine behind this server; null: the engine runs in this process (onnxruntime-node). */
  backend: BackendKind | null;
  /** The serving engine's base URL, e.g. `http://127.0.0.1:30000` (null without `backend`). */
  backendUrl: string | null;
  /** The model id: its files at `{host}/{model}/resolve/main/{file}`. */
  model: string;
  /**
   * Where the model's files are: a URL (`https://huggingface.co`, a mirror), `file://…`, a local
   * folder, or `bundled` (the copy of TinyStories-656K in vendor/models). Unset: `bundled` for
   * TinyStories-656K, else the hub.
   */
  host: string | null;
  /** The name the serving engine knows the model by (its `--served-model-name`); default: `model`. */
  backendModel: string;
  port: number;
  /** The address to listen on (default 127.0.0.1; `0.0.0.0` in a container). */
  bind: string;
  apiKey: string | undefined;
  /** How long a backend request may take before the client gets 504 (a stream: its first byte, then each gap). */
  timeoutMs: number;
  /** The embedded engine's execution provider. */
  device: ServeDevice;
  /** The embedded engine's compute threads (onnxruntime-node's intra-op threads); null: every core. */
  threads: number | null;
  /** The embedded engine's model format (`auto`: the best the model offers for the CPU). */
  dtype: DtypeChoice;
  /** Where model files from an HTTP host are kept (integrity-checked, resumed with Range). */
  cacheDir: string;
  /** Host names accepted besides localhost, the loopback addresses and the bound address. */
  allowedHosts: string[];
  /** Origins (`https://app.example`) whose pages may call the server; `*` for any. Default: none. */
  corsOrigins: string[];
  /** Open connections at most; one more is closed at once. */
  maxConnections: number;
  /** Requests that may wait behind the one served (past it: 429 `queue_full`). */
  maxQueued: number;
}

/** The default cache folder: `$XDG_CACHE_HOME/jev-local`, else `~/.cache/jev-local` (`%LOCALAPPDATA%\jev-local` on Windows). */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env['XDG_CACHE_HOME']) return join(env['XDG_CACHE_HOME'], 'jev-local');
  if (process.platform === 'win32' && env['LOCALAPPDATA']) return join(env['LOCALAPPDATA'], 'jev-local');
  return join(homedir(), '.cache', 'jev-local');
}

export const SERVE_DEFAULTS = {
  host: DEFAULT_HOST,
  port: 8080,
  bind: '127.0.0.1',
  timeoutMs: 60_000,
  device: 'cpu',
  dtype: 'auto',
  maxConnections: 256,
  maxQueued: DEFAULT_MAX_QUEUED,
} as const;

export const SERVE_USAGE = `usage: jev-local serve --model ID [--host URL|DIR] [--device cpu|cuda] [--threads N] [--dtype D] [--cache-dir DIR]
                       [--port P] [--bind ADDR] [--api-key KEY] [--allowed-host NAME]… [--cors-origin ORIGIN]…
                       [--max-connections N] [--max-queued N]
       jev-local serve --backend sglang|vllm --backend-url URL --model ID [--host URL|DIR] [--backend-model NAME]
                       [--timeout-ms N] [the same server flags]

  --model            model id; its files at {host}/{model}/resolve/main/
  --host             where the model's files are: a URL, file://…, a folder, or bundled
                     (default: bundled for TinyStories-656K, else ${SERVE_DEFAULTS.host})
  --device           the in-process engine's onnxruntime-node execution provider: cpu or cuda (default ${SERVE_DEFAULTS.device})
  --threads          the in-process engine's compute threads (default: every core, ${cpus().length} here)
  --dtype            fp32, fp16, q8, q4, q4f16 or auto (default ${SERVE_DEFAULTS.dtype})
  --cache-dir        where files from an HTTP host are kept (default ${defaultCacheDir()})
  --port             port to listen on (default ${SERVE_DEFAULTS.port})
  --bind             address to listen on (default ${SERVE_DEFAULTS.bind}); beyond loopback, set --api-key
  --api-key          requests must carry Authorization: Bearer KEY
  --allowed-host     a Host name accepted besides localhost, the loopback addresses and --bind (repeatable)
  --cors-origin      an origin whose pages may call the server, or * (repeatable; default none)
  --max-connections  open connections at most (default ${SERVE_DEFAULTS.maxConnections})
  --max-queued       requests waiting behind the one served before 429 (default ${SERVE_DEFAULTS.maxQueued})
  --backend          serve from a serving engine instead: sglang or vllm
  --backend-url      its base URL (e.g. http://127.0.0.1:30000)
  --timeout-ms       a backend request slower than this is answered 504 (default ${SERVE_DEFAULTS.timeoutMs})
  --backend-model    the model's name on the backend (default: --model)`;

/** A refusal of the command line, printed with the usage. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

const FLAGS = [
  '--backend',
  '--backend-url',
  '--model',
  '--host',
  '--port',
  '--bind',
  '--api-key',
  '--timeout-ms',
  '--backend-model',
  '--device',
  '--threads',
  '--dtype',
  '--cache-dir',
  '--allowed-host',
  '--cors-origin',
  '--max-connections',
  '--max-queued',
] as const;
type Flag = (typeof FLAGS)[number];
const REPEATABLE: readonly Flag[] = ['--allowed-host', '--cors-origin'];
/** More compute threads than this is a typo, not a machine. */
const MAX_THREADS = 1024;
const DTYPES: readonly DtypeChoice[] = ['fp32', 'fp16', 'q8', 'q4', 'q4f16', 'auto'];

/** Parses the arguments after `serve`; throws UsageError naming what is wrong. */
export function parseServeArgs(argv: readonly string[]): ServeOptions {
  const values = new Map<Flag, string>();
  const lists = new Map<Flag, string[]>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const name = (eq > 0 ? arg.slice(0, eq) : arg) as Flag;
    if (!FLAGS.includes(name)) throw new UsageError(`unknown argument ${JSON.stringify(arg)}`);
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || value === '') throw new UsageError(`${name} needs a value`);
    if (REPEATABLE.includes(name)) lists.set(name, [...(lists.get(name) ?? []), ...value.split(',').map((v) => v.trim()).filter(Boolean)]);
    else values.set(name, value);
  }
  const required = (flag: Flag): string => {
    const v = values.get(flag);
    if (v === undefined) throw new UsageError(`${flag} is required`);
    return v;
  };
  const integer = (flag: Flag, fallback: number, min: number, max: number): number => {
    const raw = values.get(flag);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`${flag} must be a whole number from ${min} to ${max}, not ${JSON.stringify(raw)}`);
    return n;
  };
  const rawBackend = values.get('--backend');
  const rawUrl = values.get('--backend-url');
  if (rawBackend === undefined && rawUrl !== undefined) throw new UsageError('--backend-url names a serving engine: --backend is required with it (sglang or vllm)');
  if (rawBackend !== undefined && rawBackend !== 'sglang' && rawBackend !== 'vllm') throw new UsageError(`--backend must be sglang or vllm, not ${JSON.stringify(rawBackend)}`);
  const backend: BackendKind | null = rawBackend ?? null;
  let backendUrl: string | null = null;
  if (backend) {
    backendUrl = required('--backend-url');
    if (!/^https?:\/\//.test(backendUrl)) throw new UsageError(`--backend-url must be an http(s) URL, not ${JSON.stringify(backendUrl)}`);
    backendUrl = backendUrl.replace(/\/+$/, '');
  }
  const model = required('--model');
  const device = values.get('--device') ?? SERVE_DEFAULTS.device;
  if (device !== 'cpu' && device !== 'cuda') throw new UsageError(`--device must be cpu or cuda, not ${JSON.stringify(device)}`);
  const dtype = (values.get('--dtype') ?? SERVE_DEFAULTS.dtype) as DtypeChoice;
  if (!DTYPES.includes(dtype)) throw new UsageError(`--dtype must be one of ${DTYPES.join(', ')}, not ${JSON.stringify(dtype)}`);
  if (backend) {
    for (const flag of ['--device', '--threads', '--dtype', '--cache-dir'] as const) {
      if (values.has(flag)) throw new UsageError(`${flag} is for the in-process engine; with --backend the serving engine chooses`);
    }
  } else {
    for (const flag of ['--timeout-ms', '--backend-model'] as const) {
      if (values.has(flag)) throw new UsageError(`${flag} needs --backend (it configures the relay to a serving engine)`);
    }
  }
  const corsOrigins = (lists.get('--cors-origin') ?? []).map((o) => {
    if (o === '*') return o;
    let url: URL;
    try {
      url = new URL(o);
    } catch {
      throw new UsageError(`--cors-origin must be an origin such as https://app.example, or *, not ${JSON.stringify(o)}`);
    }
    if (url.origin === 'null' || url.origin !== o.replace(/\/+$/, '')) throw new UsageError(`--cors-origin must be an origin (scheme, host and port only), not ${JSON.stringify(o)}`);
    return url.origin;
  });
  return {
    backend,
    backendUrl,
    model,
    host: values.get('--host') ?? null,
    backendModel: values.get('--backend-model') ?? model,
    port: integer('--port', SERVE_DEFAULTS.port, 0, 65535),
    bind: values.get('--bind') ?? SERVE_DEFAULTS.bind,
    apiKey: values.get('--api-key'),
    timeoutMs: integer('--timeout-ms', SERVE_DEFAULTS.timeoutMs, 1, 3_600_000),
    device,
    threads: values.has('--threads') ? integer('--threads', 0, 1, MAX_THREADS) : null,
    dtype,
    cacheDir: values.get('--cache-dir') ?? defaultCacheDir(),
    allowedHosts: (lists.get('--allowed-host') ?? []).map((h) => h.toLowerCase()),
    corsOrigins,
    maxConnections: integer('--max-connections', SERVE_DEFAULTS.maxConnections, 1, 1_000_000),
    maxQueued: integer('--max-queued', SERVE_DEFAULTS.maxQueued, 0, 1_000_000),
  };
}
