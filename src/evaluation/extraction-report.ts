/**
 * An extraction report as Markdown (report.md) and its reliability diagrams (one SVG per field
 * type), written by the CLI and shown by the playground.
 */
import type { ExtractionMetrics, ExtractionReport } from './extraction-types.ts';
import { reliabilitySvg } from './svg.ts';

const num = (x: number | null, digits = 3): string => (x === null ? '–' : x.toFixed(digits));

/** The reliability diagram of a group's confidence (bars: share right; dots: mean confidence). */
export function extractionReliabilitySvg(m: ExtractionMetrics): string {
  const present = m.reliability.reduce((s, b) => s + b.count, 0);
  return reliabilitySvg({ key: `${m.key} (confidence)`, items: present, ece: m.confidence_ece ?? 0, reliability: m.reliability });
}

export function extractionSvgName(m: ExtractionMetrics): string {
  return `extraction-reliability-${m.key.replace(/[^A-Za-z0-9_-]/g, '_')}.svg`;
}

function table(rows: readonly ExtractionMetrics[], head: string): string[] {
  return [
    `| ${head} | items | exact match | refusals | pNull Brier | pNull AUROC | guess right (present) | confidence ECE | span exact | span IoU (n) |`,
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (m) =>
        `| ${m.key} | ${m.items} | ${num(m.exact_match)} | ${m.refusals} | ${num(m.null_brier)} | ${num(m.null_auroc)} | ${num(m.guess_accuracy)} | ${num(m.confidence_ece)} | ${num(m.span_exact)} | ${num(m.span_iou)} (${m.span_items}) |`,
    ),
  ];
}

export function extractionReportMarkdown(report: ExtractionReport): string {
  const lines = [
    `# Extraction evaluation: ${report.data.name}`,
    '',
    `Model ${report.model} on ${report.device}; ${report.data.items} items.` +
      (report.latency_ms ? ` Latency per item: mean ${report.latency_ms.mean.toFixed(0)} ms, p50 ${report.latency_ms.p50.toFixed(0)} ms, p95 ${report.latency_ms.p95.toFixed(0)} ms.` : ''),
    '',
    'Exact match: the value (null when pNull ≥ 0.5) equals the expected one, null included. pNull: Brier score and AUROC for "the field is absent". ' +
      'Confidence: against "the guess equals the expected value", over the items where a value is expected (ECE, 10 bins). Spans: the answer\'s source against the labelled one.',
    '',
    '## By field type',
    '',
    ...table(report.by_type, 'type'),
    '',
    '## By field',
    '',
    ...table(report.by_field, 'field'),
    '',
    '## Reliability of confidence',
    '',
    ...report.by_type.filter((m) => m.guess_accuracy !== null).map((m) => `![${m.key}](${extractionSvgName(m)})`),
  ];
  if (report.errors.length > 0) {
    lines.push('', '## Failed requests', '', ...report.errors.map((e) => `- line ${e.line} (${e.id}): ${e.message}`));
  }
  return `${lines.join('\n')}\n`;
}
