import { describe, expect, it } from 'vitest';
import { END, renderChart, renderOrtBuilds, renderResults, START, updateDocument } from '../../bench/lib/report.ts';
import { median, type BenchResult, type OrtBuildSide } from '../../bench/lib/schema.ts';
import { SMOL } from '../../bench/lib/plan.ts';
import { evaluateTargets } from '../../bench/lib/targets.ts';
import type { LoadVisit, LoadVisitResult } from '../../bench/lib/schema-load-rows.ts';

// The bench's writers on a made-up result: no browser, no timing, no assertion on speed.
const result: BenchResult = {
  schema: 'jev-bench/1',
  machine: 'Test CPU, 2 cores',
  browser: 'Chromium 1.2.3',
  commit: 'abc1234-dirty',
  date: '2025-01-01T00:00:00.000Z',
  mode: 'quick',
  threads: 2,
  cross_origin_isolated: true,
  adapter: null,
  reps: {},
  load_average: { start: [1, 1, 1], end: [1, 1, 1] },
  duration_s: 60,
  decisions: [
    {
      device: 'wasm', model: 'm', dtype: 'fp32', questions: 16, state_tokens: 512, prefix_tokens: 560,
      engine_ms: 1000, naive_ms: 4000, speedup: 4, ceiling: 4.5, efficiency: 0.889, engine_tokens: 2000, naive_tokens: 9000,
      engine_passes: 17, naive_passes: 16, reps: 1, engine_min_ms: 1000, naive_min_ms: 4000, speedup_best: 4, engine_samples_ms: [1000], naive_samples_ms: [4000],
      engine_cpu_s: 1.9, naive_cpu_s: 7.6, speedup_cpu: 4, engine_cpu_share: 1.9, naive_cpu_share: 1.9, max_prob_diff: 1e-7,
    },
  ],
  chat: [
    {
      device: 'wasm', model: 'm', dtype: 'fp32', prompt_tokens: 400, new_tokens: 64, ttft_ms: 3000, decode_tps: 20,
      baseline_ttft_ms: 3100, baseline_decode_tps: 19, followup_ttft_ms: 300, cold_followup_ttft_ms: 8000,
      followup_history_tokens: 1000, followup_prompt_tokens: 1030, followup_cached_tokens: 1000, cold_followup_cached_tokens: 3,
      same_text: true, reps: 1, followup_reps: 1, best: { ttft_ms: 3000, decode_tps: 20, baseline_ttft_ms: 3100, baseline_decode_tps: 19, followup_ttft_ms: 300, cold_followup_ttft_ms: 8000 },
      cpu_share: { engine: 1.9, baseline: 1.9, followup: 1.9, cold_followup: 1.9 },
      samples: { ttft_ms: [3000], decode_tps: [20], baseline_ttft_ms: [3100], baseline_decode_tps: [19], followup_ttft_ms: [300], cold_followup_ttft_ms: [8000] },
    },
  ],
  peers: [{ peer: 'wllama', model: 'm', dtype: 'q4', device: 'wasm', threads: 2, prefill_tps: 200, decode_tps: 40, engine_prefill_tps: 250, engine_decode_tps: 30 }],
  peer_details: [
    {
      model: 'm', dtype: 'q4', threads: 2, prompt_tokens: { engine: 400, wllama: 400 }, decode_tokens: 64, reps: 3,
      wllama: { multithread: true, threads: 2, load_ms: 1000, prefill_tps: [200], decode_tps: [40], wall_ms: [3000], cache_n: [0] },
      engine: { threads: 2, load_ms: 2000, prefill_tps: [250], decode_tps: [30], step_ms_median: [33] },
      memory: {
        engine: { model_bytes: 100 * 2 ** 20, load_peak_rss_bytes: 700 * 2 ** 20, serving_peak_rss_bytes: 500 * 2 ** 20 },
        wllama: { model_bytes: 80 * 2 ** 20, load_peak_rss_bytes: 450 * 2 ** 20, serving_peak_rss_bytes: 400 * 2 ** 20 },
      },
      loadavg: [0.5, 0.7], loadavg_per_run: [0.5],
    },
  ],
  formats: [
    {
      device: 'wasm', model: 'm', export: 'optimum', dtype: 'q4', status: 'measured', reason: null, bytes: 2 ** 21, load_ms: 100, prompt_tokens: 200, ttft_ms: 1000,
      prefill_tps: 200, new_tokens: 16, decode_tps: 25, decision_questions: 4, decision_state_tokens: 64, decision_ms: 1500, max_prob_diff_vs_fp32: 0.0123,
      same_text_as_fp32: true, renderer_peak_rss_bytes: 2 ** 29, load_peak_rss_bytes: 2 ** 29, serving_peak_rss_bytes: 3 * 2 ** 27, model_bytes: 2 ** 27, worker_js_heap_peak_bytes: 2 ** 24, worker_array_buffers_peak_bytes: 2 ** 26, reps: 1,
      samples: { ttft_ms: [1000], decode_tps: [25], decision_ms: [1500] },
    },
    {
      device: 'wasm', model: 'm-gqa', export: 'gqa', dtype: 'q4', status: 'measured', reason: null, bytes: 2 ** 21, load_ms: 100, prompt_tokens: 200, ttft_ms: 800,
      prefill_tps: 250, new_tokens: 16, decode_tps: 50, decision_questions: 4, decision_state_tokens: 64, decision_ms: 1000, max_prob_diff_vs_fp32: 0.02,
      same_text_as_fp32: false, renderer_peak_rss_bytes: 2 ** 29, load_peak_rss_bytes: 2 ** 29, serving_peak_rss_bytes: 3 * 2 ** 27, model_bytes: 2 ** 27, worker_js_heap_peak_bytes: 2 ** 24, worker_array_buffers_peak_bytes: 2 ** 26, reps: 1,
      samples: { ttft_ms: [800], decode_tps: [50], decision_ms: [1000] },
    },
    {
      device: 'wasm', model: 'm', export: 'optimum', dtype: 'q4f16', status: 'refused', reason: 'model_load_failed: no float16 kernels', bytes: null, load_ms: null, prompt_tokens: null,
      ttft_ms: null, prefill_tps: null, new_tokens: null, decode_tps: null, decision_questions: 4, decision_state_tokens: null, decision_ms: null, max_prob_diff_vs_fp32: null,
      same_text_as_fp32: null, renderer_peak_rss_bytes: null, load_peak_rss_bytes: null, serving_peak_rss_bytes: null, model_bytes: 2 ** 27, worker_js_heap_peak_bytes: null, worker_array_buffers_peak_bytes: null, reps: 1,
      samples: { ttft_ms: [], decode_tps: [], decision_ms: [] },
    },
  ],
  prefix_cache: [
    {
      model: 'm', device: 'wasm', dtype: 'fp32', state_tokens: 512, prefix_tokens: 560, questions: 4, first_ms: 6000, repeat_ms: 1000, cold_repeat_ms: 5900,
      speedup: 6, speedup_same_work: 5.9, cached_tokens: 560, first_tokens: 700, repeat_tokens: 140, cold_repeat_tokens: 700, max_prob_diff: 3e-8, reps: 1,
    },
  ],
  prefix_cache_chat: [
    { model: 'm', device: 'wasm', dtype: 'fp32', system_tokens: 480, prompt_tokens: 520, cached_tokens: 505, first_ttft_ms: 4000, repeat_ttft_ms: 400, cold_repeat_ttft_ms: 4100, speedup_same_work: 10.25, reps: 1 },
  ],
  structured: [
    {
      device: 'wasm', model: 'm', dtype: 'fp32', prompt_tokens: 120, new_tokens: 64, decode_tps: 20, constrained_decode_tps: 19, token_cost_ratio: 1.053, token_cost_ratio_direct: 1.01, token_cost_ratio_outside_forward: 1.02, forward_ms_per_token: 45, other_ms_per_token: 2, constrained_other_ms_per_token: 3,
      ttft_ms: 500, first_ttft_ms: 800, cached_ttft_ms: 503, cached_ttft_delta_ms: 3, grammar_first_token_ms: 1.5, compile_ms: 300, first_use_ttft_ms: 1500,
      mask_ms_per_token: 0.4, fill_ms_per_token: 0.3, masking_ms_per_token: 0.1, accept_ms_per_token: 0.05, schema: '{}', reps: 1,
      samples: { ms_per_token: [50], constrained_ms_per_token: [52.6], ttft_ms: [500], first_ttft_ms: [800], cached_ttft_ms: [503], grammar_first_token_ms: [1.5] },
    },
  ],
  tabs: [
    { model: 'm', device: 'wasm', dtype: 'fp32', tabs: 4, renderers_rss_bytes: 1.2 * 2 ** 30, one_tab_rss_bytes: 2 ** 30, ratio_to_one_tab: 1.2, independent_rss_bytes: 4 * 2 ** 30, independent_ratio_to_one_tab: 4, engines: 1, independent_engines: 4, served_tabs: 4, renderers_pss_bytes: 2 ** 30, independent_pss_bytes: 3 * 2 ** 30, pss_ratio_to_one_tab: 1.1, renderer_rss_bytes: [2 ** 30, 2 ** 27], independent_renderer_rss_bytes: [2 ** 30, 2 ** 30], blank_control: { rss_bytes: 1.15 * 2 ** 30, pss_bytes: 1.05 * 2 ** 30, ratio_to_one_tab: 1.15, pss_ratio_to_one_tab: 1.05, relay_over_blank_bytes: 0.05 * 2 ** 30, relay_over_blank_pss_bytes: 0.05 * 2 ** 30 } },
  ],
  peer_agreement: [{ model: 'm', dtype: 'q4', bound: 0.25, pass: true, greedy_steps: 24, identical_greedy_tokens: true, max_abs_dlogprob_top: 2e-5, tokenization_agree: '5/5' }],
  load: [{ device: 'wasm', model: 'm', dtype: 'fp32', bytes: 2 ** 20, cold_ms: 5000, warm_ms: 2000 }],
  memory: [
    { device: 'wasm', model: 'm', dtype: 'fp32', phase: 'decisions', model_bytes: 2 ** 28, renderer_peak_rss_bytes: 2 ** 30, browser_tree_peak_rss_bytes: 2 ** 31, worker_js_heap_peak_bytes: 2 ** 24, worker_array_buffers_peak_bytes: 2 ** 25, gpu_buffer_peak_bytes: null },
  ],
  targets: [{ name: 't', value: 0.89, threshold: 0.8, met: true, detail: 'ok' }],
  notes: ['a note'],
};

describe('bench report writers', () => {
  it('keep the contract fields in the JSON', () => {
    const json = JSON.parse(JSON.stringify(result));
    for (const k of ['machine', 'browser', 'commit', 'decisions', 'chat', 'peers']) expect(json).toHaveProperty(k);
    for (const k of ['device', 'model', 'questions', 'state_tokens', 'engine_ms', 'naive_ms', 'ceiling']) expect(json.decisions[0]).toHaveProperty(k);
    for (const k of ['peer', 'model', 'dtype', 'device', 'threads', 'prefill_tps', 'decode_tps', 'engine_prefill_tps', 'engine_decode_tps']) expect(json.peers[0]).toHaveProperty(k);
    for (const k of ['ttft_ms', 'decode_tps', 'baseline_ttft_ms', 'baseline_decode_tps', 'followup_ttft_ms', 'cold_followup_ttft_ms']) expect(json.chat[0]).toHaveProperty(k);
    for (const k of ['model', 'device', 'phase', 'model_bytes', 'renderer_peak_rss_bytes']) expect(json.memory[0]).toHaveProperty(k);
    for (const k of ['model', 'device', 'state_tokens', 'questions', 'first_ms', 'repeat_ms', 'cached_tokens']) expect(json.prefix_cache[0]).toHaveProperty(k);
    for (const k of ['model', 'device', 'decode_tps', 'constrained_decode_tps', 'first_ttft_ms', 'cached_ttft_ms', 'mask_ms_per_token']) expect(json.structured[0]).toHaveProperty(k);
    for (const k of ['model', 'tabs', 'renderers_rss_bytes', 'one_tab_rss_bytes']) expect(json.tabs[0]).toHaveProperty(k);
  });

  it('render tables and an SVG chart, and replace only the generated block of the document', () => {
    const block = renderResults(result, 'npm run bench -- --json x.json', 'benchmarks.svg');
    expect(block).toContain('| 512 | 16 | 560 | 1.00 s | 4.00 s | 4.00× | 4.50× | 89% |');
    expect(block).toContain('| m · wasm · fp32 | 512 | 4 | 6.00 s | 1.00 s | 6.00× | 5.00× | 120% | 5.90 s | 5.90× | 560 | 700 / 140 / 700 | 3.0e-8 | 1 |');
    expect(block).toContain('| m · wasm · fp32 | 480 tokens | 4.00 s | 400 ms | 4.10 s | 10.25× | 505 / 520 | 1 |');
    expect(block).toContain('abc1234-dirty');
    expect(block).toContain('| m · wasm · fp32 | 4 | 1229 MiB (1.20×; 1 engine, serving 4) | 4096 MiB (4.00×; 4 engines) | 1024 MiB | 1024 MiB (1.10×) / 3072 MiB | 1178 MiB (1.15×; 51 MiB) |');
    expect(block).toContain("| m · wasm · fp32 | 120 → 64 | 19.00 / 20.00 tok/s | 1.020× (whole steps 1.05×; grammar's own time 1.010×) | 500 ms / 800 ms / 503 ms | 1.50 (TTFT Δ 3.0) | 300 ms | 0.40 (0.30 + 0.10) | 1.50 s | 1 |");
    // engine ÷ wllama: 250/200 prefill, 30/40 decode
    // and each side's serving peak beside the bytes of the file it loaded
    expect(block).toContain('| m | q4 (Q4_0) | 2 | 200.0 tok/s | 250.0 tok/s | 1.25× | 40.0 tok/s | 30.0 tok/s | 0.75× | —, 33.00 ms, — | 400 MiB (80 MiB) | 500 MiB (100 MiB) | 3 |');
    expect(block).toContain('| m | q4 (Q4_0) | **yes** | yes (24 steps) | 2.0e-5 | 3e-1 | 5/5 |');
    // format rows: measured, GQA against the Optimum row of the same dtype (50 / 25 decode), refused with the reason
    expect(block).toContain('| m | optimum | wasm | q4 | 2 MiB | 200.0 tok/s | 25.00 tok/s | 1.50 s (Q=4, S=64) | 1.2e-2 | yes | 512 MiB | 384 MiB | 3.00× | 64 MiB |  |');
    expect(block).toContain('| m-gqa | gqa | wasm | q4 | 2 MiB | 250.0 tok/s | 50.00 tok/s | 1.00 s (Q=4, S=64) | 2.0e-2 | no | 512 MiB | 384 MiB | 3.00× | 64 MiB | 2.00× |');
    expect(block).toContain('| m | optimum | wasm | q4f16 | — | **refused**: model_load_failed: no float16 kernels |');
    // memory: a 256 MiB model, a 1 GiB renderer peak → 4.00×
    expect(block).toContain('| m · wasm | decisions | 256 MiB | 1024 MiB | 4.00× |');
    const svg = renderChart(result.decisions, result.chat);
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.trim().endsWith('</svg>')).toBe(true);
    const doc = updateDocument(`# Benchmarks\n\nintro\n\n${START}\nold\n${END}\n\nafter\n`, block);
    expect(doc).toContain('intro');
    expect(doc).toContain('after');
    expect(doc).not.toContain('\nold\n');
    expect(updateDocument(doc, 'new block')).toContain('new block');
  });

  it('hold the prefix cache repeat to 90 % of its token ceiling, the ceiling beside the speedup', () => {
    const pc = { ...result.prefix_cache[0]!, model: SMOL };
    const target = (r: typeof pc) => evaluateTargets({ ...result, prefix_cache: [r] }).find((t) => t.name.startsWith('prefix cache S=512 Q=4'))!;
    // 6.00 s ÷ 1.00 s = 6× against 700 ÷ 140 = 5× the tokens fed
    expect(target(pc)).toMatchObject({ value: 1.2, threshold: 0.9, met: true });
    expect(target(pc).detail).toContain('6.00× of a 5.00× token ceiling');
    expect(target({ ...pc, repeat_ms: 1500 })).toMatchObject({ value: 0.8, met: false });
  });

  it('hold each kind of return visit to wllama (time to ready ≤ 1.0×, peak until ready ≤ 1.1×), q4 to 1.5 s and TinyStories to 0.5 s', () => {
    const visit = (kind: LoadVisit['visit'], ready: number, peak: number | null, loadPeak?: number): LoadVisit => ({
      visit: kind, index: 0, ready_ms: ready, first_answer_ms: ready + 100, navigation_ms: 50, peak_renderers_rss_bytes: peak, ...(loadPeak === undefined ? {} : { load_peak_renderers_rss_bytes: loadPeak }), last_load: null,
    });
    const row = (runtime: LoadVisitResult['runtime'], model: string, dtype: string, visits: LoadVisit[], threads = 2): LoadVisitResult => ({
      runtime, model, device: 'wasm', dtype, threads, cross_origin_isolated: true, visits, return_ready_ms: null, fresh_ready_ms: null, load_average: { start: 1, end: 1 },
    });
    const MiB = 2 ** 20;
    const load_visits = [
      // reloads: medians 2,000 vs 1,600 ms; fresh: 1,400 vs 1,600 ms (the first visit counts in neither)
      // Fresh visits' peaks until ready (800 vs 800 MiB) are the load's, not the whole visit's (2,000 MiB with its first answer); reloads' rows have only the whole visit's.
      row('engine', SMOL, 'q4', [visit('first', 9000, 5000 * MiB), visit('return', 2000, 1100 * MiB), visit('return', 3000, 1000 * MiB), visit('return', 1000, null), visit('fresh', 1400, 2000 * MiB, 800 * MiB)]),
      row('wllama', SMOL, 'q4', [visit('first', 5000, 100 * MiB), visit('return', 1600, 1000 * MiB), visit('fresh', 1600, 900 * MiB, 800 * MiB)]),
      row('engine', 'TinyStories-656K', 'fp32', [visit('return', 450, 500 * MiB)]),
      // At 1 thread, against wllama's 1-thread row only (its 2-thread row above is not this one's peer).
      row('engine', SMOL, 'q8', [visit('return', 1200, 700 * MiB)], 1),
      row('wllama', SMOL, 'q8', [visit('return', 600, 700 * MiB)], 2),
      row('wllama', SMOL, 'q8', [visit('return', 1000, 700 * MiB)], 1),
    ];
    const targets = evaluateTargets({ ...result, load_visits });
    const find = (prefix: string) => targets.find((t) => t.name.startsWith(prefix))!;
    expect(find(`load ${SMOL} q4, 2 threads, reloads: time to ready ≤ 1.0×`)).toMatchObject({ value: 1.25, threshold: 1, met: false });
    expect(find(`load ${SMOL} q4, 2 threads, fresh visits: time to ready ≤ 1.0×`)).toMatchObject({ value: 0.875, met: true });
    expect(find(`load ${SMOL} q4, 2 threads, reloads: renderers' peak until ready ≤ 1.1×`)).toMatchObject({ value: 1.1, met: true });
    expect(find(`load ${SMOL} q4, 2 threads, fresh visits: renderers' peak until ready`)).toMatchObject({ value: 1, met: true });
    expect(find(`load ${SMOL} q4, 2 threads, fresh visits: renderers' peak until ready`).detail).toContain('to the first answer 2000 MiB vs 900 MiB');
    expect(find(`load ${SMOL} q4, 2 threads, reloads: time to ready ≤ 1.50 s`)).toMatchObject({ value: 2000, threshold: 1500, met: false });
    expect(find(`load ${SMOL} q4, 2 threads, fresh visits: time to ready ≤ 1.50 s`)).toMatchObject({ value: 1400, met: true });
    expect(find('load TinyStories-656K fp32, 2 threads, reloads: time to ready ≤ 500 ms')).toMatchObject({ value: 450, met: true });
    // No peer row for TinyStories here: no ratio is made up.
    expect(targets.filter((t) => t.name.startsWith('load TinyStories-656K')).map((t) => t.name)).toHaveLength(1);
    expect(find(`load ${SMOL} q8, 1 thread, reloads: time to ready ≤ 1.0×`)).toMatchObject({ value: 1.2, met: false });
  });

  it('takes medians', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
  });

  it('name the onnxruntime build and Chromium where the run recorded them, and the ort-builds rows', () => {
    const side = (decode: number[], prefill: number[], outside: number): OrtBuildSide => ({
      build: null, load_ms: 1, prefill_tps: median(prefill), decode_tps: median(decode), decode_tps_median_step: 1000, best_decode_tps: Math.max(...decode),
      best_prefill_tps: Math.max(...prefill), step_ms: 1, step_ms_max: 9, run_ms: 0.7, outside_ms: outside,
      samples: { prefill_tps: prefill, decode_tps: decode, step_ms: [1], step_ms_p90: [2], step_ms_max: [9], run_ms: [0.7], outside_ms: [outside] },
    });
    const withRuntime = { ...result, runtime: { ort_build: 'jspi', chromium: '156.0.8078.108', user_agent: 'HeadlessChrome/156.0.0.0' } };
    const block = renderResults(withRuntime, 'npm run bench', null);
    expect(block).toContain("Chromium 1.2.3 (headless); the worker's userAgent: Chromium 156.0.8078.108");
    expect(block).toContain('| onnxruntime-web build | jspi |');
    expect(renderResults(result, 'npm run bench', null)).not.toContain('onnxruntime-web build');
    const table = renderOrtBuilds([
      {
        model: 'm', dtype: 'fp32', device: 'wasm', threads: 2, prompt_tokens: 400, decode_steps: 63, reps: 3,
        jspi: side([90, 100, 110], [300, 310, 320], 0.25), asyncify: side([40, 50, 60], [290, 300, 310], 0.3),
        decode_ratio: 2, decode_ratio_median_step: 1, prefill_ratio: 1.03, loadavg_per_run: [1, 1],
      },
    ]);
    expect(table).toContain('| m | fp32 | 2 | 100.0 [90.0–110.0] | 50.0 [40.0–60.0] | 2.00× | 1000.0 / 1000.0 tok/s | 1.00× | 310.0 [300.0–320.0] | 300.0 [290.0–310.0] | 1.03× | 0.250 / 0.300 ms | 3 |');
  });
});
