/**
 * bench/gpu: the script that measures the engine's WebGPU path on a GPU machine without a browser,
 * run here on the CPU as it runs there (pack, unpack, generate the model, bench), on the generated
 * tiny model: wasm for real, and WebGPU on Dawn's null backend (an adapter that runs no shaders:
 * it shows that onnxruntime-web's WebGPU backend starts in Node on Dawn's `navigator.gpu` and that
 * the engine loads and serves through it; its numbers mean nothing and are not checked). Speed is
 * not asserted: the bench's figures come from `npm run bench:gpu` (docs/benchmarks.md).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { gpuRowsMarkdown, maxProbabilityGap, type GpuRow, type GpuRun } from '../../bench/gpu/report.ts';
import { REPO } from '../support/models.ts';
import { ORT_BUILDS } from '../../src/engine/runtime/ort-build.ts';

const row = (over: Partial<GpuRow>): GpuRow => ({
  device: 'wasm', dtype: 'fp32', adapter: null, threads: 1, load_ms: 100, prompt_tokens: 300, prefill_tps: 100, prefill_tps_all: [90, 100, 110],
  decode_tokens: 64, decode_tps: 20, decode_tps_all: [20], decision_ms: 1000, decision_ms_all: [1000], state_tokens: 512, questions: 4,
  int8_head: null, answers: { q0: { true: 0.25, false: 0.75 }, q1: { main: 0.5, side: 0.3, absent: 0.2 } }, ...over,
});

describe('the GPU bench report', () => {
  it('takes the largest |Δp| over the answers both decisions give', () => {
    const a = row({}).answers;
    expect(maxProbabilityGap(a, { q0: { true: 0.26, false: 0.74 }, q1: { main: 0.45, side: 0.3, absent: 0.25 } })).toBeCloseTo(0.05, 12);
    expect(maxProbabilityGap(a, { q9: { x: 1 } })).toBeNull();
  });

  it('sets each WebGPU row beside wasm of the same dtype', () => {
    const run: GpuRun = {
      date: '2026-01-01T00:00:00Z', machine: 'Test CPU', node: 'v24.0.0', ort_build: 'jspi', dawn: 'dawn.node', webgpu_error: null,
      adapter: { vendor: 'nvidia', architecture: 'hopper', description: 'NVIDIA H200', shaderF16: true }, model: 'm', commit: 'abc1234',
      rows: [
        row({ device: 'webgpu', threads: null, prefill_tps: 1000, decode_tps: 50, decision_ms: 250, answers: { q0: { true: 0.2501, false: 0.7499 } } }),
        row({}),
      ],
      skipped: [{ device: 'webgpu', dtype: 'q4f16', why: 'no | kernel' }],
    };
    const md = gpuRowsMarkdown(run);
    expect(md).toContain('NVIDIA H200');
    expect(md).toMatch(/\| webgpu \| fp32 \| 1000\.0 .*\| 10\.00×, 2\.50×, 4\.00× faster \| 1\.0e-4 \|/);
    expect(md).toContain('| wasm (1 thread) | fp32 | 100.0 (90.0–110.0) |');
    expect(md).toContain('not run: no / kernel');
  });
});

describe('bench/gpu on this CPU', () => {
  const dir = mkdtempSync(join(tmpdir(), 'jev-gpu-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('packs, generates the model and measures wasm and the WebGPU path through Dawn', () => {
    // With the Node that travels (bench/gpu/pack.ts NODE_PACKAGE, from the npm registry), uncompressed.
    execFileSync('npx', ['tsx', 'bench/gpu/pack.ts', '--out', join(dir, 'pack'), '--no-xz'], { cwd: REPO, stdio: 'pipe', timeout: 240_000 });
    const pack = JSON.parse(readFileSync(join(dir, 'pack', 'pack.json'), 'utf8')) as { files: Record<string, number> };
    expect(Object.keys(pack.files)).toEqual(expect.arrayContaining(['bench.mjs', 'generate.mjs', 'dawn.node', 'node', `ort/${ORT_BUILDS.jspi.wasm}`, `ort/${ORT_BUILDS.asyncify.wasm}`]));
    const args = ['--device', 'webgpu,wasm', '--dtype', 'fp32', '--reps', '1', '--prefill', '24', '--decode', '6', '--state', '24', '--questions', '2'];
    const env = {
      ...process.env, JEV_GPU_PACK: join(dir, 'pack'), JEV_GPU_WORK: join(dir, 'work'), OUT: join(dir, 'out'),
      JEV_GPU_MODEL: 'tiny-random-llama', JEV_DAWN_FLAGS: 'backend=null',
    };
    execFileSync('bash', ['bench/gpu/run.sh', ...args], { cwd: REPO, env, stdio: 'pipe', timeout: 240_000 });
    const run = JSON.parse(readFileSync(join(dir, 'out', 'gpu.json'), 'utf8')) as GpuRun;
    expect(run.skipped).toEqual([]);
    expect(run.node).toMatch(/^v2[4-9]\./);
    expect(run.ort_build).toBe('jspi'); // Node 24 has WebAssembly.Suspending
    const wasm = run.rows.find((r) => r.device === 'wasm')!;
    const gpu = run.rows.find((r) => r.device === 'webgpu')!;
    expect(gpu.adapter).not.toBeNull();
    for (const r of [wasm, gpu]) {
      expect(r.prefill_tps).toBeGreaterThan(0);
      expect(r.decision_ms).toBeGreaterThan(0);
      expect(r.prompt_tokens).toBeGreaterThanOrEqual(24);
      expect(Object.keys(r.answers)).toEqual(['q0', 'q1']);
    }
    // wasm computes: its decision's probabilities are a distribution per question.
    for (const answers of Object.values(wasm.answers)) expect(Object.values(answers).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 6);
    expect(readFileSync(join(dir, 'out', 'gpu.md'), 'utf8')).toContain('| wasm (1 thread) | fp32 |');

    // The asyncify build serves WebGPU in Node too (JEV_ORT_BUILD hides JSPI from the engine).
    execFileSync('bash', ['bench/gpu/run.sh', ...args, '--device', 'webgpu'], { cwd: REPO, env: { ...env, JEV_ORT_BUILD: 'asyncify' }, stdio: 'pipe', timeout: 240_000 });
    const asyncify = JSON.parse(readFileSync(join(dir, 'out', 'gpu.json'), 'utf8')) as GpuRun;
    expect(asyncify.ort_build).toBe('asyncify');
    expect(asyncify.skipped).toEqual([]);
    expect(asyncify.rows.map((r) => r.device)).toEqual(['webgpu']);
  }, 420_000);
});
