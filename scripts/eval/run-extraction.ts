/**
 * `npm run eval -- --data SET.extraction.jsonl`: a labelled extraction set (its first line has
 * `fields`) run through the page's `window.jev.extractions.create`, the metrics computed here by
 * src/evaluation (docs/evaluation.md, "Extraction sets"). Writes report.json, report.md, one
 * reliability SVG per field type, and observations.jsonl (every field of every item) into --out.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  extractionReliabilitySvg,
  extractionReportMarkdown,
  extractionSvgName,
  runExtractionEvaluation,
  type ExtractionItem,
  type ExtractionReport,
} from '../../src/evaluation/index.ts';
import type { BrowserEngine } from './browser-engine.ts';
import { progressBar } from './progress.ts';

export async function runExtractionSet(options: { items: ExtractionItem[]; dataName: string; engine: BrowserEngine; out: string; signal: AbortSignal }): Promise<{ report: ExtractionReport; written: string[] }> {
  const { engine } = options;
  const bar = progressBar();
  let run;
  try {
    run = await runExtractionEvaluation({
      items: options.items,
      dataName: options.dataName,
      extract: engine.extract,
      signal: options.signal,
      device: engine.status.device ?? 'unknown',
      onProgress: (p) => bar.update({ ...p, mode: 0, modes: 1 }),
    });
  } finally {
    bar.done();
  }
  const { report, observations } = run;
  mkdirSync(options.out, { recursive: true });
  const written: string[] = [];
  const write = (name: string, content: string) => {
    writeFileSync(join(options.out, name), content);
    written.push(name);
  };
  write('report.json', `${JSON.stringify(report, null, 2)}\n`);
  write('report.md', extractionReportMarkdown(report));
  for (const m of report.by_type) if (m.guess_accuracy !== null) write(extractionSvgName(m), extractionReliabilitySvg(m));
  write('observations.jsonl', observations.map((o) => `${JSON.stringify(o)}\n`).join(''));
  return { report, written };
}

export function extractionSummary(report: ExtractionReport): string {
  const f = (x: number | null) => (x === null ? '–' : x.toFixed(3));
  const lines = [`model ${report.model} on ${report.device}, ${report.data.items} items (extraction)`];
  for (const m of report.by_type) {
    lines.push(`  ${m.key} (${m.items}): exact match ${f(m.exact_match)}, pNull Brier ${f(m.null_brier)} AUROC ${f(m.null_auroc)}, confidence ECE ${f(m.confidence_ece)}, span exact ${f(m.span_exact)} IoU ${f(m.span_iou)}${m.refusals ? `, ${m.refusals} refused` : ''}`);
  }
  return `${lines.join('\n')}\n`;
}
