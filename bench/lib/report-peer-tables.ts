/**
 * docs/benchmarks.md's tables of the comparisons beside the engine (schema-peer-rows.ts): wllama on
 * the same weights, and onnxruntime-web's JSPI build against its asyncify build.
 */
import { GGUF_TYPE, type PeerDtype } from '../peers/models.ts';
import { median, type BenchResult, type OrtBuildRow } from './schema.ts';
import { mib } from './measure.ts';
import { num, table } from './report-cells.ts';

/** The equal-work check and the wllama rows (nothing where not measured). */
export function peerTables(r: BenchResult): string[] {
  const out: string[] = [];
  if (r.peers.length || r.peer_agreement.length) {
    out.push('### Against llama.cpp (wllama), same weights');
    out.push('');
    out.push(
      'Prefill: a ~400-token prompt read in one pass (tokens/s). Decode: 63 single-token passes after it (tokens/s). ' +
        'Each runtime in a page (renderer process) of its own, alternating, with the same thread count; ratio = engine ÷ wllama (≥ 1 means the engine is faster). ' +
        'Peak RSS: each renderer\'s peak resident set while serving (after the load, warm-ups and runs), beside the bytes of the file it loaded.',
    );
    out.push('');
    if (r.peer_agreement.length) {
      out.push(
        table(
          ['model', 'dtype (GGUF)', 'equal work', 'greedy tokens identical', 'max Δ log p (top-10)', 'bound', 'tokenization agrees'],
          r.peer_agreement.map((a) => [
            a.model,
            `${a.dtype ?? 'fp32'} (${GGUF_TYPE[(a.dtype ?? 'fp32') as PeerDtype] ?? '?'})`,
            a.pass ? '**yes**' : '**no**',
            a.identical_greedy_tokens ? `yes (${a.greedy_steps} steps)` : `first ${a.greedy_first_mismatch ?? '?'} of ${a.greedy_steps} (then a near-tie)`,
            a.max_abs_dlogprob_top.toExponential(1),
            a.bound === undefined ? '—' : a.bound.toExponential(0),
            a.tokenization_agree,
          ]),
        ),
      );
      out.push('');
    }
    out.push(
      table(
        ['model', 'dtype (GGUF)', 'threads', 'prefill wllama', 'prefill engine', 'prefill ratio', 'decode wllama', 'decode engine', 'decode ratio', 'engine: build, median step, outside the graph', 'peak RSS wllama (file)', 'peak RSS engine (file)', 'reps'],
        r.peers.map((p) => {
          const dtype = p.dtype ?? 'fp32';
          const d = r.peer_details.find((x) => x.model === p.model && x.threads === p.threads && (x.dtype ?? 'fp32') === dtype);
          return [
            p.model,
            `${dtype} (${GGUF_TYPE[dtype] ?? '?'})`,
            p.threads,
            `${num(p.prefill_tps, 1)} tok/s`,
            `${num(p.engine_prefill_tps, 1)} tok/s`,
            `${num(p.engine_prefill_tps / p.prefill_tps)}×`,
            `${num(p.decode_tps, 1)} tok/s`,
            `${num(p.engine_decode_tps, 1)} tok/s`,
            `${num(p.engine_decode_tps / p.decode_tps)}×`,
            d ? `${d.engine.ort_build ?? '—'}, ${num(median(d.engine.step_ms_median))} ms, ${d.engine.outside_ms_median?.length ? `${num(median(d.engine.outside_ms_median), 3)} ms` : '—'}` : '—',
            d?.memory ? `${mib(d.memory.wllama.serving_peak_rss_bytes)} (${mib(d.memory.wllama.model_bytes)})` : '—',
            d?.memory ? `${mib(d.memory.engine.serving_peak_rss_bytes)} (${mib(d.memory.engine.model_bytes)})` : '—',
            d?.reps ?? '—',
          ];
        }),
      ),
    );
    out.push('');
  }
  return out;
}

/** `--only ort-builds`: onnxruntime-web's JSPI build against its asyncify build, one line per (model, dtype, threads). */
export function renderOrtBuilds(rows: readonly OrtBuildRow[]): string {
  const out: string[] = ['### onnxruntime-web builds: JSPI against asyncify', ''];
  out.push(
    'Both builds in pages of one browser, alternating; decode = 63 single-token passes ÷ their time (a typical step: 1000 ÷ the median step); ' +
      'outside the graph: a step\'s wall time minus its time inside the session\'s run. Medians over the repetitions, [min–max].',
  );
  out.push('');
  const range = (xs: readonly number[]) => (xs.length ? `[${num(Math.min(...xs), 1)}–${num(Math.max(...xs), 1)}]` : '');
  out.push(
    table(
      ['model', 'dtype', 'threads', 'decode jspi', 'decode asyncify', 'ratio', 'typical step jspi / asyncify', 'ratio', 'prefill jspi', 'prefill asyncify', 'ratio', 'outside the graph jspi / asyncify', 'reps'],
      rows.map((x) => [
        x.model,
        x.dtype,
        x.threads,
        `${num(x.jspi.decode_tps, 1)} ${range(x.jspi.samples.decode_tps)}`,
        `${num(x.asyncify.decode_tps, 1)} ${range(x.asyncify.samples.decode_tps)}`,
        `${num(x.decode_ratio)}×`,
        `${num(x.jspi.decode_tps_median_step, 1)} / ${num(x.asyncify.decode_tps_median_step, 1)} tok/s`,
        `${num(x.decode_ratio_median_step)}×`,
        `${num(x.jspi.prefill_tps, 1)} ${range(x.jspi.samples.prefill_tps)}`,
        `${num(x.asyncify.prefill_tps, 1)} ${range(x.asyncify.samples.prefill_tps)}`,
        `${num(x.prefill_ratio)}×`,
        `${num(x.jspi.outside_ms, 3)} / ${num(x.asyncify.outside_ms, 3)} ms`,
        x.reps,
      ]),
    ),
  );
  return out.join('\n');
}
