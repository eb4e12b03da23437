import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { errorMessages, JevError } from '../contract/index.ts';
import { errorReply } from '../http/error-response.ts';
import type { JsonReply } from '../http/json-reply.ts';

/**
 * What the server answers before any request reaches the engine (docs/server.md, "Security"):
 *
 * - **Host:** only `localhost` (and `*.localhost`), the loopback addresses, the bound address (and,
 *   bound to every interface, this machine's own addresses), and the `--allowed-host` names. A page
 *   that points a name of its own at 127.0.0.1 (DNS rebinding) sends that name as Host: 403.
 * - **Origin:** a request that carries one not in `--cors-origin` (none by default) is a web page's:
 *   403, preflight or not, whatever its content type. Requests without Origin (curl, SDKs, servers)
 *   pass. An allowed origin gets CORS headers, and its preflight a 204.
 * - **Key:** `Authorization: Bearer KEY` compared in constant time (timingSafeEqual over SHA-256
 *   digests, so neither the key's bytes nor its length show in the time taken), on every path the
 *   HTTP surface serves.
 *
 * Every refusal is the contract's error body, `{"error":{message,type,param,code}}`.
 */
export interface GuardPolicy {
  /** The address the server listens on (`127.0.0.1`, `0.0.0.0`, `::`, a LAN address). */
  bind: string;
  allowedHosts: readonly string[];
  corsOrigins: readonly string[];
  apiKey: string | undefined;
  /** Whether a path is one the HTTP surface serves (the key is asked for there; elsewhere the surface's 404). */
  serves(url: string): boolean;
}

/** What the guard decided: refuse with `reply`, or let the request through with `headers` added to its answer. */
export type GuardVerdict = { reply: JsonReply; headers: Record<string, string> } | { reply: null; headers: Record<string, string> };

export class RequestGuard {
  readonly #names: Set<string>;
  readonly #addresses: Set<string>;
  readonly #origins: Set<string>;
  readonly #anyOrigin: boolean;
  readonly #key: Buffer | null;
  readonly #serves: (url: string) => boolean;

  constructor(policy: GuardPolicy) {
    this.#names = new Set(['localhost', ...policy.allowedHosts.map((h) => h.toLowerCase())]);
    const bind = unbracket(policy.bind.toLowerCase());
    this.#addresses = new Set([bind]);
    if (isWildcard(bind)) {
      for (const list of Object.values(networkInterfaces())) for (const i of list ?? []) this.#addresses.add(i.address.toLowerCase());
    } else if (!isIP(bind)) this.#names.add(bind);
    this.#origins = new Set(policy.corsOrigins.filter((o) => o !== '*'));
    this.#anyOrigin = policy.corsOrigins.includes('*');
    this.#key = policy.apiKey === undefined ? null : digest(`Bearer ${policy.apiKey}`);
    this.#serves = policy.serves;
  }

  /** Whether the Host header names this server (see the class comment). */
  hostAllowed(host: string | undefined): boolean {
    if (!host) return false;
    const name = hostName(host);
    if (name === null) return false;
    if (this.#names.has(name) || name.endsWith('.localhost')) return true;
    if (!isIP(name)) return false;
    return isLoopback(name) || this.#addresses.has(name);
  }

  originAllowed(origin: string): boolean {
    return this.#anyOrigin || this.#origins.has(origin);
  }

  /** Whether `authorization` holds the key (true where no key is configured). Constant time in the header's content. */
  keyMatches(authorization: string | undefined): boolean {
    if (!this.#key) return true;
    return timingSafeEqual(digest(authorization ?? ''), this.#key);
  }

  check(req: IncomingMessage): GuardVerdict {
    const host = req.headers.host;
    if (!this.hostAllowed(host)) return refuse(new JevError('forbidden', errorMessages.hostNotAllowed(host ?? null), { param: null, details: { reason: 'host_not_allowed' } }));
    const origin = req.headers.origin;
    const headers: Record<string, string> = {};
    if (origin !== undefined) {
      if (!this.originAllowed(origin)) return refuse(new JevError('forbidden', errorMessages.originNotAllowed(origin), { param: null, details: { reason: 'origin_not_allowed' } }));
      headers['access-control-allow-origin'] = origin;
      headers['vary'] = 'Origin';
      headers['access-control-expose-headers'] = 'Retry-After';
      if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
        return { reply: null, headers: { ...headers, ...preflightHeaders(req) } };
      }
    }
    if (!this.keyMatches(req.headers.authorization) && this.#serves(req.url ?? '/')) {
      return refuse(new JevError('unauthorized', errorMessages.unauthorized(), { param: null }), headers);
    }
    return { reply: null, headers };
  }
}

/** Whether a verdict is an allowed origin's preflight (answered 204 with its headers, nothing else). */
export function isPreflight(verdict: GuardVerdict): boolean {
  return verdict.reply === null && 'access-control-allow-methods' in verdict.headers;
}

function preflightHeaders(req: IncomingMessage): Record<string, string> {
  const asked = req.headers['access-control-request-headers'];
  return {
    'access-control-allow-methods': 'GET, POST',
    'access-control-allow-headers': typeof asked === 'string' && asked.length <= 1000 ? asked : 'authorization, content-type',
    'access-control-max-age': '600',
  };
}

function refuse(error: JevError, headers: Record<string, string> = {}): GuardVerdict {
  return { reply: errorReply(error, headers), headers };
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** The host name of a Host header (`name:port`, `[v6]:port`), lower case; null where it is malformed. */
export function hostName(host: string): string | null {
  const h = host.trim().toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    if (end < 0) return null;
    const rest = h.slice(end + 1);
    if (rest !== '' && !/^:\d{1,5}$/.test(rest)) return null;
    return h.slice(1, end);
  }
  const m = /^([^:]+)(?::\d{1,5})?$/.exec(h);
  return m ? m[1]!.replace(/\.$/, '') : null;
}

function unbracket(address: string): string {
  return address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
}

export function isWildcard(address: string): boolean {
  return address === '0.0.0.0' || address === '::' || address === '[::]';
}

export function isLoopback(address: string): boolean {
  const a = unbracket(address.toLowerCase());
  return a === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a) || /^::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a) || a === 'localhost';
}
