/** The decision / chat grid's measurements of one target (bench/run.ts runs one per plan). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS } from '../../scripts/machine/chromium.ts';
import type { ModelHost } from '../../e2e/support/model-host.ts';
import { MODEL_ROOTS } from '../../scripts/models/roots.ts';
import { chromiumPath } from '../peers/browser.ts';
import { type BenchPage, openPage } from './bench-page.ts';
import { measureChat } from './chat-rows.ts';
import { measureDecisions } from './decision-rows.ts';
import { log, type Timed } from './measure.ts';
import { modelBytes } from './model-bytes.ts';
import type { TargetPlan } from './plan.ts';
import { measurePrefixCache } from './prefix-cache-rows.ts';
import { ProcessSampler } from '../../scripts/machine/procs.ts';
import { type ChatResult, type DecisionResult, type LoadResult, type MemoryResult, type PrefixCacheResult, type PrefixChatResult, type RuntimeInfo, chromiumOfUserAgent } from './schema.ts';

/** What one (model, device) target measured. */
export interface TargetOutput {
  decisions: DecisionResult[];
  chat: ChatResult | null;
  prefixCache: PrefixCacheResult[];
  prefixChat: PrefixChatResult | null;
  load: LoadResult;
  memory: MemoryResult[];
  threads: number | null;
  isolated: boolean;
  adapter: string | null;
  /** The onnxruntime-web build the engine's worker loaded and the Chromium its userAgent names. */
  runtime: RuntimeInfo | null;
}

/**
 * One target in its own browser profile: the cold and warm loads, the decision rows against the
 * naive way, the prefix cache, chat and the follow-up turn, with each phase's memory.
 */
export async function runTarget(plan: TargetPlan, site: string, mirror: ModelHost, threads: number | undefined, notes: string[]): Promise<TargetOutput> {
  const executablePath = chromiumPath();
  const profile = mkdtempSync(join(tmpdir(), 'jev-bench-profile-'));
  const ctx = await chromium.launchPersistentContext(profile, { executablePath, headless: true, args: CHROMIUM_ARGS });
  const sampler = new ProcessSampler(profile);
  sampler.start();
  const memory: MemoryResult[] = [];
  const base = { device: plan.device, model: plan.model, dtype: plan.dtype, model_bytes: modelBytes(MODEL_ROOTS, plan.model, plan.dtype) };
  const loadOptions = { model: plan.model, host: mirror.url, device: plan.device, dtype: plan.dtype, threads };
  try {
    // ---- load: cold (empty profile: over the network from the mirror), then warm (Cache Storage)
    let p = await openPage(ctx, site, log);
    const info = await p.call<{ crossOriginIsolated: boolean }>('info');
    const adapter = plan.device === 'webgpu' ? await p.call<string | null>('adapter') : null;
    sampler.mark();
    const before = mirror.requests.length;
    const cold = await p.call<{ ms: number; bytes: number; status: { threads: number | null; contextLength: number | null }; ortBuild?: string | null; userAgent?: string; chromium?: string | null }>('load', loadOptions);
    const runtime: RuntimeInfo = { ort_build: cold.ortBuild ?? null, chromium: cold.chromium ?? chromiumOfUserAgent(cold.userAgent), user_agent: cold.userAgent ?? null };
    const coldFetches = mirror.requests.slice(before).filter((r) => r.startsWith('GET ') && r.endsWith('.onnx')).length;
    await p.heap.sample();
    memory.push(await phaseMemory(base, 'load', sampler, p));
    log(`${plan.model} ${plan.device}: cold load ${(cold.ms / 1000).toFixed(1)} s (${(cold.bytes / 2 ** 20).toFixed(0)} MiB, ${coldFetches} onnx fetch); onnxruntime-web build ${runtime.ort_build ?? '—'}, Chromium ${runtime.chromium ?? '—'}`);
    await p.close();

    p = await openPage(ctx, site, log);
    const mark = mirror.requests.length;
    const warm = await p.call<{ ms: number }>('load', loadOptions);
    const warmFetches = mirror.requests.slice(mark).filter((r) => r.startsWith('GET ') && r.endsWith('.onnx')).length;
    log(`${plan.model} ${plan.device}: warm load ${(warm.ms / 1000).toFixed(1)} s (${warmFetches} onnx fetch${warmFetches ? ' — not served from the cache!' : ''})`);
    const load: LoadResult = { ...base, bytes: cold.bytes, cold_ms: cold.ms, warm_ms: warm.ms };

    /** Runs one worker call and reports the CPU seconds the browser used meanwhile. */
    const timed: Timed = async <T>(name: string, ...args: unknown[]) => {
      const c0 = sampler.cpu();
      const r = await p.call<T>(name, ...args);
      return { r, cpu: sampler.cpu() - c0 };
    };

    // ---- warm-up: one small decision each way (first runs allocate onnxruntime's arenas)
    await p.call('setupDecisions', 'warmup', 32, 99);
    await p.call('engineDecision', 'warmup', 2);
    await p.call('naivePass', 'warmup', 0);
    await p.call('naivePass', 'warmup', 1);
    await p.call('gpuResetPeak');
    sampler.mark();
    p.heap.mark();

    // ---- decisions, engine against the naive way (bench/lib/decision-rows.ts)
    const { decisions, measuredStates } = await measureDecisions(p, plan, base, timed, notes, log);
    memory.push(await phaseMemory(base, 'decisions', sampler, p));

    // ---- the prefix cache: the same state asked again, a system prompt shared by two conversations
    let prefix: Awaited<ReturnType<typeof measurePrefixCache>> = { decisions: [], chat: null };
    try {
      prefix = await measurePrefixCache(p, plan, { model: plan.model, device: plan.device, dtype: plan.dtype }, measuredStates, cold.status.contextLength ?? 2048, log);
    } catch (e) {
      const note = `${plan.model} ${plan.device} prefix cache: not measured (${(e as Error).message.split('\n')[0]})`;
      log(note);
      notes.push(note);
    }

    // ---- chat and the follow-up turn (bench/lib/chat-rows.ts)
    let chat: ChatResult | null = null;
    try {
      chat = await measureChat(p, plan, base, timed, log);
      memory.push(await phaseMemory(base, 'chat', sampler, p));
    } catch (e) {
      const note = `${plan.model} ${plan.device} chat: not measured (${(e as Error).message.split('\n')[0]})`;
      log(note);
      notes.push(note);
    }
    await p.call('dispose');
    await p.close();
    return { decisions, chat, prefixCache: prefix.decisions, prefixChat: prefix.chat, load, memory, threads: cold.status.threads, isolated: info.crossOriginIsolated, adapter, runtime };
  } finally {
    sampler.stop();
    await ctx.close().catch(() => undefined);
    rmSync(profile, { recursive: true, force: true });
  }
}

async function phaseMemory(base: Pick<MemoryResult, 'device' | 'model' | 'dtype' | 'model_bytes'>, phase: MemoryResult['phase'], sampler: ProcessSampler, p: BenchPage): Promise<MemoryResult> {
  await p.heap.sample();
  const gpu = await p.call<{ live: number; peak: number } | null>('gpuBytes');
  await p.call('gpuResetPeak');
  const heap = p.heap.mark();
  const peaks = sampler.mark();
  return {
    ...base,
    phase,
    renderer_peak_rss_bytes: peaks.rendererRss,
    browser_tree_peak_rss_bytes: peaks.treeRss,
    worker_js_heap_peak_bytes: heap?.heap ?? null,
    worker_array_buffers_peak_bytes: heap?.buffers ?? null,
    gpu_buffer_peak_bytes: base.device === 'webgpu' ? (gpu?.peak ?? null) : null,
  };
}
