/**
 * Writes what `npm run eval` produced into its output folder:
 * - report.json: the EvaluationReport (src/evaluation/types.ts);
 * - report.md: the same as Markdown (reportMarkdown), with the SVGs linked;
 * - mode<m>-reliability-<question>.svg and mode<m>-confusion-<question>.svg (reportSvgs);
 * - observations.jsonl: every observation, one per line, with its mode and the item's line and
 *   id, so the metrics can be recomputed independently;
 * - profile.json: the fitted calibration profile, when one was fitted.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { reportMarkdown, reportSvgs, type EvalItem, type EvaluationReport, type Observation } from '../../src/evaluation/index.ts';

/** One line of observations.jsonl. */
export type ObservationLine = Observation & { mode: number; line: number; id: string | null };

export function writeReport(out: string, report: EvaluationReport, items: readonly EvalItem[], observations: ReadonlyMap<number, readonly Observation[]>): string[] {
  mkdirSync(out, { recursive: true });
  const written: string[] = [];
  const write = (name: string, content: string) => {
    writeFileSync(join(out, name), content);
    written.push(name);
  };
  write('report.json', `${JSON.stringify(report, null, 2)}\n`);
  const svgs = reportSvgs(report);
  for (const svg of svgs) write(svg.fileName, svg.svg);
  write('report.md', reportMarkdown(report, Object.fromEntries(svgs.map((s) => [s.ref, s.fileName]))));
  const lines = [...observations.entries()]
    .sort(([a], [b]) => a - b)
    .flatMap(([mode, list]) =>
      list.map((o): ObservationLine => {
        const item = items[o.item]!;
        return { mode, line: item.line, id: item.id, ...o };
      }),
    );
  write('observations.jsonl', lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
  if (report.fit) write('profile.json', `${JSON.stringify(report.fit.profile, null, 2)}\n`);
  return written;
}
