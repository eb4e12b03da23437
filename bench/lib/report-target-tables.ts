/**
 * docs/benchmarks.md's tables of the rows one target writes (schema-target-rows.ts): decisions,
 * chat, the prefix cache, model load, peak memory. Each returns its lines; report.ts joins them.
 */
import type { BenchResult } from './schema.ts';
import { mib } from './measure.ts';
import { groupBy, ms, num, table } from './report-cells.ts';

/** Per (model, device, dtype): the decision rows, after the chart's image link. */
export function decisionTables(r: BenchResult, chartFile: string | null): string[] {
  const out: string[] = [];
  out.push('### Decisions');
  out.push('');
  if (chartFile) out.push(`![Decision speedup over the naive way, against its token-count ceiling](${chartFile})`, '');
  for (const [key, rows] of groupBy(r.decisions, (d) => `${d.model} · ${d.device} · ${d.dtype}`)) {
    out.push(`**${key}**`, '');
    out.push(
      table(
        ['S (state tokens)', 'Q', 'prefix', 'engine', 'naive', 'speedup', 'ceiling', 'of ceiling', 'tokens engine / naive', 'passes engine / naive', 'speedup of fastest samples', 'CPU s engine / naive', 'speedup in CPU time', 'CPU share engine / naive', 'reps', 'max Δp'],
        rows.map((d) => [
          d.state_tokens,
          d.questions,
          d.prefix_tokens,
          ms(d.engine_ms),
          ms(d.naive_ms),
          `${d.speedup.toFixed(2)}×`,
          `${d.ceiling.toFixed(2)}×`,
          `${(d.efficiency * 100).toFixed(0)}%`,
          `${d.engine_tokens} / ${d.naive_tokens}`,
          `${d.engine_passes} / ${d.naive_passes}`,
          `${num(d.speedup_best, 2)}× (${num((d.speedup_best / d.ceiling) * 100, 0)}%)`,
          `${num(d.engine_cpu_s, 1)} / ${num(d.naive_cpu_s, 1)}`,
          `${num(d.speedup_cpu, 2)}× (${num((d.speedup_cpu / d.ceiling) * 100, 0)}%)`,
          `${num(d.engine_cpu_share, 2)} / ${num(d.naive_cpu_share, 2)}`,
          d.reps,
          d.max_prob_diff === null ? '—' : d.max_prob_diff.toExponential(1),
        ]),
      ),
    );
    out.push('');
  }
  return out;
}

/** The chat rows: engine against the pipeline, and the follow-up turn. */
export function chatTable(r: BenchResult): string[] {
  const out: string[] = [];
  out.push('### Chat');
  out.push('');
  out.push(
    table(
      ['model · device', 'prompt → new tokens', 'TTFT engine', 'TTFT pipeline', 'decode engine', 'decode pipeline', 'same greedy text', 'follow-up TTFT (KV reuse)', 'follow-up TTFT (cold)', 'history (reused / prompt)', 'best of reps: decode engine / pipeline', 'CPU share engine / pipeline', 'reps'],
      r.chat.map((c) => [
        `${c.model} · ${c.device} · ${c.dtype}`,
        `${c.prompt_tokens} → ${c.new_tokens}`,
        ms(c.ttft_ms),
        ms(c.baseline_ttft_ms),
        `${num(c.decode_tps)} tok/s`,
        `${num(c.baseline_decode_tps)} tok/s`,
        c.same_text ? 'yes' : 'no',
        ms(c.followup_ttft_ms),
        `${ms(c.cold_followup_ttft_ms)} (${num(c.cold_followup_ttft_ms / c.followup_ttft_ms, 1)}×)`,
        `${c.followup_history_tokens} (${c.followup_cached_tokens} / ${c.followup_prompt_tokens}; cold ${c.cold_followup_cached_tokens})`,
        `${num(c.best?.decode_tps)} / ${num(c.best?.baseline_decode_tps)} tok/s${c.decode_step_ms?.outside_graph != null ? ` (engine step outside the graph ${num(c.decode_step_ms.outside_graph, 3)} ms)` : ''}`,
        `${num(c.cpu_share?.engine)} / ${num(c.cpu_share?.baseline)}`,
        `${c.reps} / ${c.followup_reps}`,
      ]),
    ),
  );
  out.push('');
  return out;
}

/** The same state asked again, and a shared system prompt (nothing where neither was measured). */
export function prefixCacheTables(r: BenchResult): string[] {
  const out: string[] = [];
  if (r.prefix_cache?.length || r.prefix_cache_chat?.length) {
    out.push('### Prefix cache (the same state asked again; a shared system prompt)');
    out.push('');
    out.push(
      'first: questions A from cold; repeat: other questions B on the same state right after (the state comes from the cache); ' +
        'cold repeat: B from cold, the same work without the cache. max |Δp|: the repeat against the cold repeat.',
    );
    out.push('');
    out.push(
      table(
        ['model · device', 'S', 'Q', 'first', 'repeat', 'first ÷ repeat', 'token ceiling', 'of ceiling', 'cold repeat', 'cold ÷ repeat', 'reused tokens', 'fed: first / repeat / cold', 'max |Δp|', 'reps'],
        (r.prefix_cache ?? []).map((x) => [
          `${x.model} · ${x.device} · ${x.dtype}`,
          x.state_tokens,
          x.questions,
          ms(x.first_ms),
          ms(x.repeat_ms),
          `${num(x.speedup)}×`,
          `${num(x.first_tokens / x.repeat_tokens)}×`,
          `${num((x.speedup / (x.first_tokens / x.repeat_tokens)) * 100, 0)}%`,
          ms(x.cold_repeat_ms),
          `${num(x.speedup_same_work)}×`,
          x.cached_tokens,
          `${x.first_tokens} / ${x.repeat_tokens} / ${x.cold_repeat_tokens}`,
          x.max_prob_diff.toExponential(1),
          x.reps,
        ]),
      ),
    );
    if (r.prefix_cache_chat?.length) {
      out.push('');
      out.push(
        table(
          ['model · device', 'shared system prompt', 'first conversation TTFT', 'second conversation TTFT', 'second, cold', 'cold ÷ cached', 'reused / prompt tokens', 'reps'],
          r.prefix_cache_chat.map((x) => [
            `${x.model} · ${x.device} · ${x.dtype}`,
            `${x.system_tokens} tokens`,
            ms(x.first_ttft_ms),
            ms(x.repeat_ttft_ms),
            ms(x.cold_repeat_ttft_ms),
            `${num(x.speedup_same_work)}×`,
            `${x.cached_tokens} / ${x.prompt_tokens}`,
            x.reps,
          ]),
        ),
      );
    }
    out.push('');
  }
  return out;
}

/** Model load, cold and warm. */
export function loadTable(r: BenchResult): string[] {
  const out: string[] = [];
  out.push('### Model load');
  out.push('');
  out.push(
    table(
      ['model · device', 'bytes', 'cold (network, empty cache)', 'warm (browser cache)'],
      r.load.map((l) => [`${l.model} · ${l.device} · ${l.dtype}`, mib(l.bytes), ms(l.cold_ms), ms(l.warm_ms)]),
    ),
  );
  out.push('');
  return out;
}

/** Peak memory per phase, and the logits-bound rows. */
export function memoryTable(r: BenchResult): string[] {
  const out: string[] = [];
  out.push('### Peak memory');
  out.push('');
  out.push(
    table(
      ['model · device', 'phase', 'model bytes', 'renderer RSS', 'RSS ÷ model', 'browser tree RSS', 'worker JS heap', 'worker ArrayBuffers', 'GPU buffers'],
      r.memory.map((m) => [
        `${m.model} · ${m.device}`,
        m.logits_peak_bytes === undefined
          ? m.phase
          : `${m.phase}, S=${m.state_tokens}: ${m.logits_budget_bytes ? `logits bound ${mib(m.logits_budget_bytes)}, passes ≤ ${m.pass_tokens} tokens` : 'no logits bound, one pass'}; largest logits ${mib(m.logits_peak_bytes)}`,
        mib(m.model_bytes),
        mib(m.renderer_peak_rss_bytes),
        m.model_bytes > 0 ? `${(m.renderer_peak_rss_bytes / m.model_bytes).toFixed(2)}×` : '—',
        mib(m.browser_tree_peak_rss_bytes),
        mib(m.worker_js_heap_peak_bytes),
        mib(m.worker_array_buffers_peak_bytes),
        m.device === 'webgpu' ? mib(m.gpu_buffer_peak_bytes) : 'n/a (wasm)',
      ]),
    ),
  );
  return out;
}
