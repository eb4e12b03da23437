/**
 * docs/benchmarks.md's tables of the sections that run on their own (schema-feature-rows.ts):
 * structured output, tabs, formats.
 */
import type { BenchResult, FormatResult } from './schema.ts';
import { mib } from './measure.ts';
import { ms, num, table } from './report-cells.ts';

/** Greedy chat under a JSON schema and without one (nothing where not measured). */
export function structuredTable(r: BenchResult): string[] {
  const out: string[] = [];
  if (r.structured?.length) {
    out.push('### Structured output (greedy chat under a JSON schema, and without one)');
    out.push('');
    out.push(
      table(
        ['model · device', 'prompt → new tokens', 'decode: schema / none', 'token cost (pass + rest)', 'TTFT: none / compiling / cached', "cached grammar's ms in it", 'compile', 'mask ms / token (fill + masking)', 'first use', 'reps'],
        r.structured.map((x) => [
          `${x.model} · ${x.device} · ${x.dtype}`,
          `${x.prompt_tokens} → ${x.new_tokens}`,
          `${num(x.constrained_decode_tps)} / ${num(x.decode_tps)} tok/s`,
          `${num(x.token_cost_ratio_outside_forward, 3)}× (whole steps ${num(x.token_cost_ratio)}×; grammar's own time ${num(x.token_cost_ratio_direct, 3)}×)`,
          `${ms(x.ttft_ms)} / ${ms(x.first_ttft_ms)} / ${ms(x.cached_ttft_ms)}`,
          `${num(x.grammar_first_token_ms)} (TTFT Δ ${num(x.cached_ttft_delta_ms, 1)})`,
          ms(x.compile_ms),
          `${num(x.mask_ms_per_token)} (${num(x.fill_ms_per_token)} + ${num(x.masking_ms_per_token)})`,
          ms(x.first_use_ttft_ms),
          x.reps,
        ]),
      ),
    );
    out.push('');
  }
  return out;
}

/** Renderers' memory with tabs sharing one engine against an engine per tab (nothing where not measured). */
export function tabsTable(r: BenchResult): string[] {
  const out: string[] = [];
  if (r.tabs?.length) {
    const mib = (x: number) => `${(x / 2 ** 20).toFixed(0)} MiB`;
    out.push("### Tabs (every renderer's resident memory (RSS): tabs sharing one engine, against an engine per tab; target at 4 tabs ≤ 1.25× one tab; PSS counts shared pages once)");
    out.push('');
    out.push(
      table(
        ['model · device', 'tabs', 'shared (× one tab)', 'an engine per tab (× one tab)', 'one tab', 'PSS: shared / an engine per tab (× one tab)', 'control: one engine tab, the rest without the library (× one tab; shared − control)'],
        r.tabs.map((x) => [
          `${x.model} · ${x.device} · ${x.dtype}`,
          x.tabs,
          `${mib(x.renderers_rss_bytes)} (${num(x.ratio_to_one_tab)}×; ${x.engines} engine${x.engines === 1 ? '' : 's'}, serving ${x.served_tabs ?? '—'})`,
          `${mib(x.independent_rss_bytes)} (${num(x.independent_ratio_to_one_tab)}×; ${x.independent_engines} engine${x.independent_engines === 1 ? '' : 's'})`,
          mib(x.one_tab_rss_bytes),
          x.renderers_pss_bytes === null || x.independent_pss_bytes === null
            ? '—'
            : `${mib(x.renderers_pss_bytes)} (${num(x.pss_ratio_to_one_tab)}×) / ${mib(x.independent_pss_bytes)}`,
          x.blank_control ? `${mib(x.blank_control.rss_bytes)} (${num(x.blank_control.ratio_to_one_tab)}×; ${mib(x.blank_control.relay_over_blank_bytes)})` : '—',
        ]),
      ),
    );
    out.push('');
  }
  return out;
}

/** The format rows: one line per (model, export, dtype), refused ones with the engine's reason. */
export function renderFormats(rows: readonly FormatResult[]): string {
  const out: string[] = [];
  out.push('### Formats (same weights, every ONNX dtype)');
  out.push('');
  out.push(
    'Each row loads one ONNX file of the generated model through the engine, in a fresh browser profile. ' +
      'Prefill: chat prompt tokens ÷ time to the first token; decode: tokens after the first ÷ their time; decision: one `Engine.decide` ' +
      'call (fresh state each repetition); Δp: largest difference of a decision probability from the fp32 row of the same weights; ' +
      'memory: the renderer\'s peak while loading and while serving (chat and decisions after the load), and the serving peak ÷ the model\'s bytes (graph + external data). GQA: the onnxruntime-genai-builder-style export of the same weights.',
  );
  out.push('');
  const ref = (x: FormatResult) => rows.find((y) => y.model.replace(/-gqa$/, '') === x.model.replace(/-gqa$/, '') && y.export === 'optimum' && y.dtype === x.dtype && y.device === x.device);
  out.push(
    table(
      ['model', 'export', 'device', 'dtype', 'download', 'prefill', 'decode', 'decision', 'Δp vs fp32', 'same greedy text as fp32', 'renderer peak RSS loading', 'renderer peak RSS serving', 'serving ÷ model', 'worker ArrayBuffers peak', 'GQA ÷ Optimum (decode)'],
      rows.map((f) => {
        if (f.status !== 'measured') return [f.model, f.export, f.device, f.dtype, mib(f.bytes), `**${f.status}**: ${f.reason ?? ''}`, '', '', '', '', '', '', '', '', ''];
        const o = f.export === 'gqa' ? ref(f) : undefined;
        return [
          f.model,
          f.export,
          f.device,
          f.dtype,
          mib(f.bytes),
          `${num(f.prefill_tps, 1)} tok/s`,
          `${num(f.decode_tps, 2)} tok/s`,
          `${f.decision_ms === null ? '—' : ms(f.decision_ms)} (Q=${f.decision_questions}, S=${f.decision_state_tokens ?? '—'})`,
          f.max_prob_diff_vs_fp32 === null ? '—' : f.max_prob_diff_vs_fp32.toExponential(1),
          f.same_text_as_fp32 === null ? '—' : f.same_text_as_fp32 ? 'yes' : 'no',
          mib(f.load_peak_rss_bytes),
          mib(f.serving_peak_rss_bytes),
          f.serving_peak_rss_bytes !== null && f.model_bytes ? `${num(f.serving_peak_rss_bytes / f.model_bytes)}×` : '—',
          mib(f.worker_array_buffers_peak_bytes),
          o && o.decode_tps && f.decode_tps ? `${num(f.decode_tps / o.decode_tps)}×` : '',
        ];
      }),
    ),
  );
  return out.join('\n');
}
