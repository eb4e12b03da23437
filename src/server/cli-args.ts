/**
 * `jev-local serve --backend sglang|vllm --backend-url URL --model ID [--host URL] [--port P]
 * [--bind ADDR] [--api-key KEY] [--timeout-ms N] [--backend-model NAME]` (CONTRACT §1; docs/scale-out.md).
 */
import { DEFAULT_HOST } from '../facade/defaults.ts';

export type BackendKind = 'sglang' | 'vllm';

export interface ServeOptions {
  backend: BackendKind;
  /** The serving engine's base URL, e.g. `http://127.0.0.1:30000`. */
  backendUrl: string;
  /** The model id: its tokenizer, chat template and config at `{host}/{model}/resolve/main/{file}`. */
  model: string;
  /** Where the model's files are: a URL (`https://huggingface.co`, a mirror), `file://…`, or a local folder. */
  host: string;
  /** The name the serving engine knows the model by (its `--served-model-name`); default: `model`. */
  backendModel: string;
  port: number;
  /** The address to listen on (default 127.0.0.1; `0.0.0.0` in a container). */
  bind: string;
  apiKey: string | undefined;
  /** How long a backend request may take before the client gets 504 (a stream: its first byte, then each gap). */
  timeoutMs: number;
}

export const SERVE_DEFAULTS = { host: DEFAULT_HOST, port: 8080, bind: '127.0.0.1', timeoutMs: 60_000 } as const;

export const SERVE_USAGE = `usage: jev-local serve --backend sglang|vllm --backend-url URL --model ID
                       [--host URL] [--port P] [--bind ADDR] [--api-key KEY]
                       [--timeout-ms N] [--backend-model NAME]

  --backend        the serving engine behind this server: sglang or vllm
  --backend-url    its base URL (e.g. http://127.0.0.1:30000)
  --model          model id; tokenizer, chat template and config from {host}/{model}/resolve/main/
  --host           where the model's files are: a URL, file://… or a folder (default ${SERVE_DEFAULTS.host})
  --port           port to listen on (default ${SERVE_DEFAULTS.port})
  --bind           address to listen on (default ${SERVE_DEFAULTS.bind})
  --api-key        requests must carry Authorization: Bearer KEY
  --timeout-ms     a backend request slower than this is answered 504 (default ${SERVE_DEFAULTS.timeoutMs})
  --backend-model  the model's name on the backend (default: --model)`;

/** A refusal of the command line, printed with the usage. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

const FLAGS = ['--backend', '--backend-url', '--model', '--host', '--port', '--bind', '--api-key', '--timeout-ms', '--backend-model'] as const;
type Flag = (typeof FLAGS)[number];

/** Parses the arguments after `serve`; throws UsageError naming what is wrong. */
export function parseServeArgs(argv: readonly string[]): ServeOptions {
  const values = new Map<Flag, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const name = (eq > 0 ? arg.slice(0, eq) : arg) as Flag;
    if (!FLAGS.includes(name)) throw new UsageError(`unknown argument ${JSON.stringify(arg)}`);
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || value === '') throw new UsageError(`${name} needs a value`);
    values.set(name, value);
  }
  const required = (flag: Flag): string => {
    const v = values.get(flag);
    if (v === undefined) throw new UsageError(`${flag} is required`);
    return v;
  };
  const backend = required('--backend');
  if (backend !== 'sglang' && backend !== 'vllm') throw new UsageError(`--backend must be sglang or vllm, not ${JSON.stringify(backend)}`);
  const backendUrl = required('--backend-url');
  if (!/^https?:\/\//.test(backendUrl)) throw new UsageError(`--backend-url must be an http(s) URL, not ${JSON.stringify(backendUrl)}`);
  const model = required('--model');
  const integer = (flag: Flag, fallback: number, min: number, max: number): number => {
    const raw = values.get(flag);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`${flag} must be a whole number from ${min} to ${max}, not ${JSON.stringify(raw)}`);
    return n;
  };
  return {
    backend,
    backendUrl: backendUrl.replace(/\/+$/, ''),
    model,
    host: values.get('--host') ?? SERVE_DEFAULTS.host,
    backendModel: values.get('--backend-model') ?? model,
    port: integer('--port', SERVE_DEFAULTS.port, 0, 65535),
    bind: values.get('--bind') ?? SERVE_DEFAULTS.bind,
    apiKey: values.get('--api-key'),
    timeoutMs: integer('--timeout-ms', SERVE_DEFAULTS.timeoutMs, 1, 3_600_000),
  };
}
