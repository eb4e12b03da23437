/**
 * Why a model did not load, told truly. Every load failure is a JevError `model_load_failed`
 * whose `details.reason` names its cause with a stable word, and whose message says what to do:
 *
 * | reason | cause |
 * | --- | --- |
 * | `host_unreachable` | no answer from the host at all (DNS, a closed port, offline) |
 * | `cors_refused` | the host answers, but without CORS headers: the browser hides the answer |
 * | `csp_refused` | the page's Content-Security-Policy forbids connecting to the host |
 * | `model_not_found` | the host has no such model (`config.json` answers 404, or 401/403 as the hub does) |
 * | `file_missing` | the model exists, but a file the chosen dtype needs (its ONNX graph, `_data`, tokenizer) answers 404 |
 * | `no_model_files` | the model exists and the host answers, but it offers none of the ONNX files this engine reads |
 * | `host_error` | the host answers another HTTP error (5xx, 429, …) |
 * | `download_failed` | a download broke off although the host answers (or a file it redirects to could not be reached) |
 * | `file_corrupt` | a download does not match the SHA-256 the host states |
 * | `unsupported_format` | the device cannot run the graph (an operator or data type its backend lacks) |
 * | `insufficient_memory` | the load needs more memory than the device offers: refused before the download (memory-check.ts), or run out of during the load |
 * | `load_error` | anything else, with onnxruntime's or transformers.js' own words |
 *
 * The first three throw the same bare `TypeError` in a browser; unanswered-probe.ts tells them apart.
 */
import { JevError } from '../../contract/index.ts';
import { isAllocationFailure } from '../runtime/allocation-failure.ts';
import { probeUnanswered, type Probe } from './unanswered-probe.ts';

export type { Probe, Unanswered } from './unanswered-probe.ts';

export const LOAD_FAILURE_REASONS = [
  'host_unreachable',
  'cors_refused',
  'csp_refused',
  'model_not_found',
  'file_missing',
  'no_model_files',
  'host_error',
  'download_failed',
  'file_corrupt',
  'unsupported_format',
  'insufficient_memory',
  'device_unavailable',
  'load_error',
] as const;

export type LoadFailureReason = (typeof LOAD_FAILURE_REASONS)[number];

/** Causes on the side of the files and their host: another device would not help. */
const NOT_THE_DEVICE: ReadonlySet<LoadFailureReason> = new Set(
  LOAD_FAILURE_REASONS.filter((r) => r !== 'unsupported_format' && r !== 'device_unavailable' && r !== 'load_error'),
);

export interface LoadFailureDetails {
  reason: LoadFailureReason;
  /** The origin of the URL at fault, e.g. `https://huggingface.co`. */
  host?: string;
  url?: string;
  /** The file at fault, relative to the model's folder (`onnx/model_q4.onnx`). */
  file?: string;
  status?: number;
  model?: string;
  dtype?: string;
  device?: string;
  /** A dtype that would work here, where one is known. */
  instead?: string;
  /** The dtypes the model offers, where they were looked up. */
  offered?: string[];
  /** insufficient_memory: the limit passed (memory-fit.ts), the bytes needed there and those the device offers. */
  limit?: string;
  needed?: number;
  available?: number;
  /** insufficient_memory: a model and dtype that fit (memory-check.ts), or null where none is known. */
  alternative?: { model: string; dtype: string; bytes: number } | null;
  /** insufficient_memory: what the device offers (device-capacity.ts). */
  capacity?: Record<string, unknown>;
}

/** Causes that pass on their own (the network or the host): the same load may succeed if tried again. */
const TRANSIENT: ReadonlySet<LoadFailureReason> = new Set<LoadFailureReason>(['host_unreachable', 'host_error', 'download_failed']);

export function loadFailure(message: string, details: LoadFailureDetails, param: string | null = 'model', cause?: unknown): JevError {
  const clean = Object.fromEntries(Object.entries(details).filter(([, v]) => v !== undefined));
  const retriable = TRANSIENT.has(details.reason);
  return new JevError('model_load_failed', message, { param, details: clean, retriable, ...(cause === undefined ? {} : { cause }) });
}

/** The `details.reason` of a load failure, or null for any other error. */
export function loadFailureReason(e: unknown): LoadFailureReason | null {
  if (!JevError.is(e) || e.code !== 'model_load_failed') return null;
  const reason = e.details?.['reason'];
  return typeof reason === 'string' && (LOAD_FAILURE_REASONS as readonly string[]).includes(reason) ? (reason as LoadFailureReason) : null;
}

/**
 * Whether a failure on WebGPU may be retried on wasm: only a fault of the device (or one whose
 * cause is unknown), never a network or host failure, which wasm would meet again.
 */
export function deviceMayFallBack(e: unknown): boolean {
  const reason = loadFailureReason(e);
  return reason === null || !NOT_THE_DEVICE.has(reason);
}

/** Where a model's files are, for the words of a failure. */
export interface FileContext {
  model: string;
  /** The URL of the model's folder: `{host}/{model}/resolve/main/`. */
  base: string;
  dtype?: string | undefined;
  device?: string | undefined;
  /** The dtypes the model offers, where already known. */
  offered?: string[] | undefined;
}

export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

function fileOf(url: string, ctx: FileContext): string {
  return url.startsWith(ctx.base) ? url.slice(ctx.base.length) : url;
}

/** An HTTP answer other than 200 for one of the model's files. */
export function statusFailure(url: string, status: number, ctx: FileContext): JevError {
  const host = originOf(url);
  const file = fileOf(url, ctx);
  const base = { host, url, file, status, model: ctx.model, dtype: ctx.dtype, device: ctx.device, offered: ctx.offered };
  if ((status === 404 || status === 401 || status === 403) && file === 'config.json') {
    const why = status === 404 ? 'answers 404' : `answers ${status} (the hub's answer for a model that does not exist, or is private or gated)`;
    return loadFailure(
      `The model ${ctx.model} does not exist at ${host}: ${url} ${why}. Check the model id (?model=) and the host (?host=).`,
      { reason: 'model_not_found', ...base },
    );
  }
  if (status === 404 || status === 401 || status === 403) {
    const needs = ctx.dtype && file.startsWith('onnx/') ? `, which dtype ${ctx.dtype} needs` : '';
    const offered = ctx.offered?.length ? ` The model offers ${ctx.offered.join(', ')}: choose one of them (?dtype=).` : '';
    return loadFailure(`${ctx.model} at ${host} has no ${file}${needs} (${url} answers ${status}).${offered}`, { reason: 'file_missing', ...base }, file.startsWith('onnx/') ? 'dtype' : 'model');
  }
  return loadFailure(`${host} answered HTTP ${status} for ${url}. Try again later, or use another host (?host=).`, { reason: 'host_error', ...base });
}

/** A fetch that threw before any answer: the host cannot be reached, or the browser refused the answer. */
export async function unansweredFailure(url: string, error: unknown, ctx: FileContext, probe: Probe = probeUnanswered): Promise<JevError> {
  const host = originOf(url);
  const base = { host, url, file: fileOf(url, ctx), model: ctx.model, dtype: ctx.dtype, device: ctx.device };
  const code = networkCode(error);
  const kind = code ? 'unreachable' : await probe(url);
  if (kind === 'cors') {
    const origin = typeof location === 'undefined' ? 'this page' : location.origin;
    return loadFailure(
      `${host} answers, but its answer does not allow ${origin} to read ${url} (no Access-Control-Allow-Origin header: CORS). ` +
        'Serve the model files with the header Access-Control-Allow-Origin: * (and Cross-Origin-Resource-Policy: cross-origin), as the hub does, or use another host (?host=).',
      { reason: 'cors_refused', ...base },
      'host',
      error,
    );
  }
  if (kind === 'csp') {
    return loadFailure(
      `This page's Content-Security-Policy forbids connecting to ${host} (${url}). Add ${host} to its connect-src, or use a host it allows (?host=).`,
      { reason: 'csp_refused', ...base },
      'host',
      error,
    );
  }
  return loadFailure(
    `${host} cannot be reached: ${url} got no answer${code ? ` (${code})` : ''}, and this browser holds no stored copy of ${ctx.model} to load offline. ` +
      'Check the connection, or point the page at a host it can reach with ?host= (npm run fetch-model writes a mirror; see docs/offline.md). ' +
      'A model loaded once stays in this browser (Model panel, "Stored in this browser") and then loads offline.',
    { reason: 'host_unreachable', ...base },
    'host',
    error,
  );
}

/** Node's fetch names the network fault (`ECONNREFUSED`, `ENOTFOUND`, …) in its cause; a browser never does. */
function networkCode(error: unknown): string | null {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  return typeof cause?.code === 'string' ? cause.code : null;
}

function errorName(e: unknown): string | null {
  const name = (e as { name?: unknown } | null)?.name;
  return typeof name === 'string' ? name : null;
}

/** Whether `error` is what fetch throws when no answer could be read (not an abort, not an HTTP status). */
export function isUnanswered(error: unknown): boolean {
  if (!(error instanceof Error) || error.name !== 'TypeError') return false;
  return /failed to fetch|fetch failed|networkerror|network error|load failed|network connection/i.test(error.message);
}

/** transformers.js' words for an HTTP status (utils/hub/constants.js ERROR_MAPPING), else `Error (N) occurred…`. */
const STATUS_WORDS: ReadonlyArray<[string, number]> = [
  ['Bad request error', 400],
  ['Unauthorized access', 401],
  ['Forbidden access', 403],
  ['Could not locate file', 404],
  ['Request timeout error', 408],
  ['Internal server error', 500],
  ['Bad gateway error', 502],
  ['Service unavailable error', 503],
  ['Gateway timeout error', 504],
];

function httpStatusOf(message: string): number | null {
  const coded = /^Error \((\d{3})\) occurred while trying to load file/.exec(message);
  if (coded) return Number(coded[1]);
  return STATUS_WORDS.find(([words]) => message.startsWith(words))?.[1] ?? null;
}

/** What onnxruntime says when a graph needs what the backend lacks. */
const UNSUPPORTED = [
  /could not find an implementation for/i,
  /not implemented/i,
  /no kernel/i,
  /unsupported (data ?type|operator|op|type)/i,
  /is not supported/i,
  /shader-f16/i,
  /f16 is not/i,
  /is not a registered function\/op/i,
];

/**
 * Any error thrown while transformers.js fetched and onnxruntime opened a model, as a load
 * failure naming its true cause. `base` is the model's folder on the host, for a fault that
 * names no URL (a bare `TypeError`), which is then probed there.
 */
export async function classifyLoadError(e: unknown, ctx: FileContext & { suggestDtype?: () => string | null }, probe?: Probe): Promise<JevError> {
  if (JevError.is(e)) return e;
  const message = e instanceof Error ? e.message : String(e);
  const url = /"(https?:\/\/[^"]+)"/.exec(message)?.[1];
  const status = (e as { status?: unknown } | null)?.status;
  if (typeof status === 'number' && url) return statusFailure(url, status, ctx);
  const statusInText = url ? httpStatusOf(message) : null;
  if (url && statusInText) return statusFailure(url, statusInText, ctx);
  if (errorName(e) === 'ModelFileNotFoundError') {
    // A local folder (Node) without the file: transformers.js names the path.
    const path = /at "([^"]+)"/.exec(message)?.[1];
    return loadFailure(`${ctx.model} has no ${path ?? 'file it needs'}: ${message}`, { reason: 'file_missing', model: ctx.model, dtype: ctx.dtype, device: ctx.device, ...(path ? { file: path } : {}) }, 'model', e);
  }
  if (/corrupt/i.test(message) && /SHA-256/i.test(message)) {
    return loadFailure(`${message} Load again to fetch it anew; if it persists, the host serves a damaged file.`, { reason: 'file_corrupt', host: originOf(ctx.base), model: ctx.model, dtype: ctx.dtype }, 'model', e);
  }
  if (isUnanswered(e)) {
    const target = url ?? `${ctx.base}config.json`;
    const failure = await unansweredFailure(target, e, ctx, probe);
    if (url || loadFailureReason(failure) !== 'cors_refused') return failure;
    // The folder answers with CORS, yet a download broke off: it may have been redirected elsewhere.
    return loadFailure(
      `A download of ${ctx.model} from ${originOf(ctx.base)} broke off (${message}), although the host answers. Try again; if it persists, check that the host's redirects (a CDN) can be reached from here.`,
      { reason: 'download_failed', host: originOf(ctx.base), model: ctx.model, dtype: ctx.dtype, device: ctx.device },
      'model',
      e,
    );
  }
  if (isAllocationFailure(e)) {
    // The estimate said it would fit (memory-check.ts), yet the device ran out: the same reason,
    // and the worker goes on (the failed session's memory is released with it).
    return loadFailure(
      `Loading ${ctx.model}${ctx.dtype ? ` (${ctx.dtype} on ${ctx.device})` : ''} ran out of memory: ${message}. Load a smaller dtype or model.`,
      { reason: 'insufficient_memory', model: ctx.model, dtype: ctx.dtype, device: ctx.device, alternative: null },
      'dtype',
      e,
    );
  }
  const provider = /AppendExecutionProvider_(\w+): Failed to load shared library/.exec(message);
  if (provider) {
    // onnxruntime-node found the provider's library but not what it links (its log names the library).
    const name = provider[1]!.toLowerCase();
    return loadFailure(
      `Loading ${ctx.model}${ctx.dtype ? ` (${ctx.dtype} on ${ctx.device})` : ''} failed: onnxruntime could not load its ${name.toUpperCase()} provider (${message}). ` +
        `The libraries it links (for CUDA: cudart, cuBLAS, cuBLASLt and cuRAND of the CUDA version the provider was built for) must be on the loader's path (LD_LIBRARY_PATH); onnxruntime's log names the one it could not open.`,
      { reason: 'device_unavailable', model: ctx.model, dtype: ctx.dtype, device: ctx.device },
      'device',
      e,
    );
  }
  if (UNSUPPORTED.some((p) => p.test(message))) {
    const suggestion = ctx.suggestDtype?.() ?? null;
    return loadFailure(
      `${ctx.device ?? 'This device'} cannot run the ${ctx.dtype ?? ''} graph of ${ctx.model}: ${message}${suggestion ? ` Use dtype ${suggestion} instead (?dtype=${suggestion}).` : ''}`,
      { reason: 'unsupported_format', model: ctx.model, dtype: ctx.dtype, device: ctx.device, ...(suggestion ? { instead: suggestion } : {}) },
      'dtype',
      e,
    );
  }
  return loadFailure(`Loading ${ctx.model}${ctx.dtype ? ` (${ctx.dtype} on ${ctx.device})` : ''} failed: ${message}`, { reason: 'load_error', model: ctx.model, dtype: ctx.dtype, device: ctx.device }, 'model', e);
}
