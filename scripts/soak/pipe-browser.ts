/**
 * Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`), without
 * Playwright: for the soak, whose memory figures must be the page's own. Playwright enables the
 * Network domain on every page, and Chromium's DevTools network agent then keeps the bodies of the
 * page's requests and responses in the renderer (up to its buffer's size): tens of MiB of resident
 * memory over a few thousand HTTP requests, which a soak would read as a leak of the engine.
 * Only what the soak needs: one page, script evaluation, its engine worker's heap, memory pressure.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { MemoryProbe } from './memory.ts';

interface Message {
  id?: number;
  method?: string;
  params?: any;
  result?: any;
  error?: { message: string };
  sessionId?: string;
}

export interface PipePage {
  /** Evaluates `expression` in the page, awaiting a promise; returns its value as JSON gives it. */
  evaluate<T = unknown>(expression: string): Promise<T>;
  /** Waits until `expression` is truthy in the page (polled every 100 ms, for at most `ms`). */
  waitFor(expression: string, ms?: number): Promise<void>;
  /** Exceptions the page did not catch. */
  readonly errors: string[];
  probe: MemoryProbe;
  close(): Promise<void>;
}

/** Launches `executable` headless with `args`, opens `url` in one page, and hands it over. */
export async function openPipePage(executable: string, args: readonly string[], url: string): Promise<PipePage> {
  const profile = mkdtempSync(join(tmpdir(), 'jev-soak-'));
  const marker = `--user-data-dir=${profile}`;
  const child = spawn(executable, [...args, '--headless', marker, '--remote-debugging-pipe', 'about:blank'], { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'] });
  const out = child.stdio[3] as Writable;
  const input = child.stdio[4] as Readable;
  const pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  const handlers: ((m: Message) => void)[] = [];
  let id = 0;
  let buffered = '';
  input.setEncoding('utf8');
  input.on('data', (data: string) => {
    buffered += data;
    let end: number;
    while ((end = buffered.indexOf('\0')) >= 0) {
      const m = JSON.parse(buffered.slice(0, end)) as Message;
      buffered = buffered.slice(end + 1);
      if (m.id !== undefined) {
        const p = pending.get(m.id);
        pending.delete(m.id);
        if (m.error) p?.reject(new Error(m.error.message));
        else p?.resolve(m.result);
      } else for (const h of handlers) h(m);
    }
  });
  const send = <T = any>(method: string, params: object = {}, sessionId?: string): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const n = ++id;
      pending.set(n, { resolve, reject });
      out.write(JSON.stringify({ id: n, method, params, ...(sessionId ? { sessionId } : {}) }) + '\0');
    });

  const { targetId } = await send<{ targetId: string }>('Target.createTarget', { url: 'about:blank' });
  const { sessionId: page } = await send<{ sessionId: string }>('Target.attachToTarget', { targetId, flatten: true });
  const workers = new Map<string, string>();
  const errors: string[] = [];
  let chunks: string[] = [];
  handlers.push((m) => {
    if (m.method === 'Target.attachedToTarget' && m.params.targetInfo.type === 'worker') workers.set(m.params.sessionId, m.params.targetInfo.url);
    if (m.method === 'Target.detachedFromTarget') workers.delete(m.params.sessionId);
    if (m.method === 'HeapProfiler.addHeapSnapshotChunk') chunks.push(m.params.chunk);
    if (m.method === 'Runtime.exceptionThrown' && m.sessionId === page) errors.push(m.params.exceptionDetails.exception?.description ?? m.params.exceptionDetails.text);
  });
  await send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: true }, page);
  await send('Runtime.enable', {}, page);
  await send('Page.navigate', { url }, page);

  const evaluate = async <T,>(expression: string): Promise<T> => {
    const r = await send<{ result: { value: T }; exceptionDetails?: { text: string; exception?: { description?: string } } }>('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true }, page);
    if (r.exceptionDetails) throw new Error(r.exceptionDetails.exception?.description ?? r.exceptionDetails.text);
    return r.result.value;
  };
  const engineWorker = () => {
    const session = [...workers].find(([, u]) => u.includes('engine.worker'))?.[0];
    if (!session) throw new Error(`no engine worker among ${[...workers.values()].join(', ')}`);
    return session;
  };
  let serviceWorker: { targetId: string; sessionId: string } | null = null;
  return {
    evaluate,
    errors,
    async waitFor(expression, ms = 120_000) {
      const until = Date.now() + ms;
      for (;;) {
        if (await evaluate<boolean>(`!!(${expression})`).catch(() => false)) return;
        if (Date.now() > until) throw new Error(`waited ${ms / 1000} s for ${expression}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    probe: {
      marker,
      async settle() {
        await send('Memory.simulatePressureNotification', { level: 'critical' }, page);
        await send('HeapProfiler.collectGarbage', {}, page);
      },
      async workerObjects() {
        const session = engineWorker();
        await send('HeapProfiler.collectGarbage', {}, session);
        chunks = [];
        await send('HeapProfiler.takeHeapSnapshot', { reportProgress: false }, session);
        return heapObjectBytes(JSON.parse(chunks.join('')));
      },
      async serviceWorkerHeap() {
        const { targetInfos } = await send<{ targetInfos: { targetId: string; type: string }[] }>('Target.getTargets');
        const sw = targetInfos.find((t) => t.type === 'service_worker');
        if (!sw) return null;
        if (serviceWorker?.targetId !== sw.targetId) {
          const { sessionId } = await send<{ sessionId: string }>('Target.attachToTarget', { targetId: sw.targetId, flatten: true });
          serviceWorker = { targetId: sw.targetId, sessionId };
        }
        await send('HeapProfiler.collectGarbage', {}, serviceWorker.sessionId);
        const usage = await send<{ usedSize: number }>('Runtime.getHeapUsage', {}, serviceWorker.sessionId);
        return usage.usedSize;
      },
      async pageHeap() {
        await send('HeapProfiler.collectGarbage', {}, page);
        const usage = await send<{ usedSize: number }>('Runtime.getHeapUsage', {}, page);
        return usage.usedSize;
      },
      async workerHeap() {
        const session = engineWorker();
        await send('HeapProfiler.collectGarbage', {}, session);
        const usage = await send<{ usedSize: number; backingStorageSize?: number }>('Runtime.getHeapUsage', {}, session);
        return { used: usage.usedSize, buffers: usage.backingStorageSize ?? 0 };
      },
    },
    async close() {
      await Promise.race([send('Browser.close'), new Promise((r) => setTimeout(r, 5000))]).catch(() => undefined);
      child.kill();
      // The browser may still be writing its profile as it goes: a folder left behind is not a failure of the soak.
      if (child.exitCode === null && child.signalCode === null) await Promise.race([new Promise((r) => child.once('exit', r)), new Promise((r) => setTimeout(r, 5000))]);
      try {
        rmSync(profile, { recursive: true, force: true, maxRetries: 3 });
      } catch {
        /* left in the temporary folder */
      }
    },
  };
}

interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/**
 * The bytes of a V8 heap snapshot's objects: every node but V8's compiled code (bytecode, machine
 * code, feedback vectors: nodes of type `code`) and wasm's compiled modules, which grow while the
 * JIT warms up (tier-up of hot functions, over thousands of requests) and are not data the engine
 * holds, and ArrayBuffers' backing stores (the wasm memory among them: figures of their own).
 */
export function heapObjectBytes(snap: HeapSnapshot): number {
  const fields = snap.snapshot.meta.node_fields;
  const [type, name, size] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [number, number, number];
  const types = snap.snapshot.meta.node_types[0];
  let bytes = 0;
  for (let k = 0; k < snap.nodes.length; k += fields.length) {
    if (types[snap.nodes[k + type]!] === 'code') continue;
    const label = snap.strings[snap.nodes[k + name]!]!;
    if (label.includes('WasmNativeModule') || label.includes('JSArrayBufferData')) continue;
    bytes += snap.nodes[k + size]!;
  }
  return bytes;
}
