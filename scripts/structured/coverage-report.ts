/**
 * The coverage survey's records summed per dataset (coverage.ts): declared coverage (both checks
 * accept), the refusals by keyword, the xgrammar compile check's failures and times, and the
 * published figures beside ours, as a printed table and as JSON.
 */
import type { CompileOutcome } from './xgrammar-stage.ts';
import type { PoolVerdict } from './verdict-pool.ts';
import { reasonShape } from './schema-verdict.ts';

export interface SchemaRecord {
  set: string;
  name: string;
  bytes: number;
  verdict: PoolVerdict | { stage: 'unreadable'; reason: string };
  /** Present where the schema was accepted and picked for the xgrammar check. */
  xgrammar?: CompileOutcome;
}

/**
 * Declared coverage of Guidance (llguidance) and XGrammar as JSONSchemaBench's authors printed it
 * in their paper-reproduction script: github.com/nathanrchn/jsb, reproduce_paper/reproduce.sh
 * (commit 9470ceb), "Coverage + Efficiency … Table 2 and Table 4 in the paper" (Guidance on the
 * llama.cpp backend) and "Efficiency (Transformers backend) … Table 3" (XGrammar). Not the
 * paper's table itself: its text could not be read here.
 */
export const PUBLISHED: Readonly<Record<string, { guidance: number; xgrammar: number }>> = {
  Glaiveai2K: { guidance: 0.98, xgrammar: 1.0 },
  Github_easy: { guidance: 0.85, xgrammar: 0.92 },
  WashingtonPost: { guidance: 0.71, xgrammar: 0.88 },
  Snowplow: { guidance: 0.84, xgrammar: 0.47 },
  Github_medium: { guidance: 0.78, xgrammar: 0.87 },
  Kubernetes: { guidance: 0.98, xgrammar: 0.12 },
  Github_hard: { guidance: 0.61, xgrammar: 0.7 },
};
export const PUBLISHED_SOURCE = 'github.com/nathanrchn/jsb reproduce_paper/reproduce.sh @ 9470ceb (JSONSchemaBench authors\' reproduction of the paper\'s Tables 2–4)';

export interface SetSummary {
  set: string;
  schemas: number;
  unreadable: number;
  contractAccepted: number;
  declared: number;
  coverage: number;
  refusals: { keyword: string; stage: string; count: number; reasons: { reason: string; count: number }[] }[];
  lowering: { p50_ms: number; p95_ms: number; max_ms: number; slowest: string | null };
  xgrammar: { checked: number; compiled: number; failures: { name: string; kind: string; status: number | null; message: string; ms: number }[]; p50_ms: number | null; p95_ms: number | null; max_ms: number | null };
  published: { guidance: number; xgrammar: number } | null;
}

export function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}
const r1 = (x: number) => Math.round(x * 10) / 10;

export function summarize(set: string, records: readonly SchemaRecord[]): SetSummary {
  const readable = records.filter((r) => r.verdict.stage !== 'unreadable');
  const declared = readable.filter((r) => r.verdict.stage === 'accepted');
  const byKeyword = new Map<string, { keyword: string; stage: string; count: number; reasons: Map<string, number> }>();
  for (const r of readable) {
    const v = r.verdict;
    if (v.stage === 'accepted' || v.stage === 'unreadable') continue;
    const key = `${v.stage}\u0000${v.keyword}`;
    const entry = byKeyword.get(key) ?? { keyword: v.keyword, stage: v.stage, count: 0, reasons: new Map<string, number>() };
    entry.count++;
    const shape = reasonShape(v.reason);
    entry.reasons.set(shape, (entry.reasons.get(shape) ?? 0) + 1);
    byKeyword.set(key, entry);
  }
  const refusals = [...byKeyword.values()]
    .sort((a, b) => b.count - a.count || a.keyword.localeCompare(b.keyword))
    .map((e) => ({ keyword: e.keyword, stage: e.stage, count: e.count, reasons: [...e.reasons].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([reason, count]) => ({ reason, count })) }));
  const lower = declared.map((r) => ({ name: r.name, ms: (r.verdict as { ms: number }).ms })).sort((a, b) => a.ms - b.ms);
  const checked = records.filter((r) => r.xgrammar);
  const okTimes = checked.filter((r) => r.xgrammar!.ok).map((r) => r.xgrammar!.ms).sort((a, b) => a - b);
  const failures = checked.filter((r) => !r.xgrammar!.ok).map((r) => {
    const x = r.xgrammar as Extract<CompileOutcome, { ok: false }>;
    return { name: r.name, kind: x.kind, status: x.status, message: x.message.slice(0, 300), ms: x.ms };
  });
  return {
    set,
    schemas: records.length,
    unreadable: records.length - readable.length,
    contractAccepted: readable.filter((r) => r.verdict.stage !== 'contract').length,
    declared: declared.length,
    coverage: readable.length ? declared.length / readable.length : 0,
    refusals,
    lowering: lower.length ? { p50_ms: r1(quantile(lower.map((l) => l.ms), 0.5)), p95_ms: r1(quantile(lower.map((l) => l.ms), 0.95)), max_ms: r1(lower.at(-1)!.ms), slowest: lower.at(-1)!.name } : { p50_ms: 0, p95_ms: 0, max_ms: 0, slowest: null },
    xgrammar: {
      checked: checked.length,
      compiled: okTimes.length,
      failures,
      p50_ms: okTimes.length ? r1(quantile(okTimes, 0.5)) : null,
      p95_ms: okTimes.length ? r1(quantile(okTimes, 0.95)) : null,
      max_ms: okTimes.length ? r1(okTimes.at(-1)!) : null,
    },
    published: PUBLISHED[set] ?? null,
  };
}

const pct = (x: number) => x.toFixed(2);

/** The per-dataset table, markdown. */
export function coverageTable(sums: readonly SetSummary[], topKeywords = 5): string[] {
  const lines = [
    '| dataset | schemas | contract accepts | declared (ours) | Guidance (published) | XGrammar (published) | top refusals (keyword: count) | xgrammar compiled / checked | compile p50 / p95 |',
    '|---|---:|---:|---:|---:|---:|---|---:|---:|',
  ];
  for (const s of sums) {
    const top = s.refusals.slice(0, topKeywords).map((r) => `${r.keyword}${r.stage === 'compiler' ? '†' : r.stage === 'contract' ? '' : ` (${r.stage})`}: ${r.count}`).join(', ');
    const pub = s.published;
    const xg = s.xgrammar.checked ? `${s.xgrammar.compiled} / ${s.xgrammar.checked}` : '—';
    const times = s.xgrammar.p50_ms === null ? '—' : `${s.xgrammar.p50_ms} / ${s.xgrammar.p95_ms} ms`;
    const unread = s.unreadable ? ` (+${s.unreadable} unreadable)` : '';
    lines.push(`| ${s.set} | ${s.schemas - s.unreadable}${unread} | ${s.contractAccepted} | ${s.declared} (**${pct(s.coverage)}**) | ${pub ? pct(pub.guidance) : '—'} | ${pub ? pct(pub.xgrammar) : '—'} | ${top} | ${xg} | ${times} |`);
  }
  const all = sums.reduce((a, s) => ({ n: a.n + s.schemas - s.unreadable, d: a.d + s.declared }), { n: 0, d: 0 });
  lines.push(`| all | ${all.n} | | ${all.d} (**${pct(all.n ? all.d / all.n : 0)}**) | | | | | |`);
  return lines;
}

/** Every accepted schema xgrammar did not compile, one line each. */
export function defectLines(sums: readonly SetSummary[]): string[] {
  const out: string[] = [];
  for (const s of sums) for (const f of s.xgrammar.failures) out.push(`${s.set}/${f.name}: ${f.kind} (${f.status ?? 'no status'}, ${f.ms} ms) ${f.message}`);
  return out;
}

/** The refusals' keywords over all datasets, with the commonest message shape of each. */
export function keywordLines(sums: readonly SetSummary[], top = 15): string[] {
  const total = new Map<string, { count: number; reasons: Map<string, number> }>();
  for (const s of sums) for (const r of s.refusals) {
    const key = `${r.keyword} [${r.stage}]`;
    const e = total.get(key) ?? { count: 0, reasons: new Map<string, number>() };
    e.count += r.count;
    for (const x of r.reasons) e.reasons.set(x.reason, (e.reasons.get(x.reason) ?? 0) + x.count);
    total.set(key, e);
  }
  return [...total]
    .sort((a, b) => b[1].count - a[1].count)
    .slice(0, top)
    .map(([k, e]) => `${k}: ${e.count} — ${[...e.reasons].sort((a, b) => b[1] - a[1])[0]?.[0] ?? ''}`);
}
