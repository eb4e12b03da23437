/**
 * An evaluation report as Markdown (report.md of `npm run eval`): per mode a table with one row
 * per question, latency, failed items and the items it got wrong; the fitted profile's held-out
 * before and after. Text from the data is escaped so it cannot break a table or inject markup.
 */
import { svgRef } from './svg.ts';
import type { EvaluationMode, EvaluationReport, QuestionMetrics } from './types.ts';

/** How many wrong answers a mode lists. */
export const WRONG_LISTED = 20;

/**
 * Escapes text for a Markdown table cell or a list item: one line; backslash, code, emphasis,
 * link brackets, HTML angle brackets, table pipes and strike-through escaped; `&` as an entity.
 * (Text never starts a line here, so line-start markers like `#` need nothing.)
 */
export function escapeMarkdown(text: string): string {
  return text
    .replace(/\r\n|\r|\n/g, ' ')
    .replace(/[\\`*_[\]<>|~]/g, (c) => `\\${c}`)
    .replace(/&/g, '&amp;');
}

function num(x: number | null, digits = 3): string {
  return x === null ? '–' : x.toFixed(digits);
}

/** What a mode is, in words. */
export function modeTitle(mode: EvaluationMode): string {
  const parts = [`calibrate ${mode.calibrate ? 'on' : 'off'}`];
  if (mode.profile !== null) parts.push(`profile ${mode.profile}`);
  if (mode.alpha !== null) parts.push(`prediction sets α = ${mode.alpha}`);
  if (mode.held_out) parts.push('held-out items only');
  return parts.join(', ');
}

/**
 * The report as Markdown. `svgFiles`: SVG ref (svgRef: `reliability:<mode>:<key>`,
 * `confusion:<mode>:<key>`) → the file's path relative to the Markdown file; those given are
 * linked as images.
 */
export function reportMarkdown(report: EvaluationReport, svgFiles: Record<string, string> = {}): string {
  const lines: string[] = [
    '# Evaluation report',
    '',
    `- Data: ${escapeMarkdown(report.data.name)} (${report.data.items} items)`,
    `- Model: ${escapeMarkdown(report.model)} on ${escapeMarkdown(report.device)}`,
    `- Created: ${escapeMarkdown(report.created)}`,
    '',
    'Accuracy and macro-F1 for noul and choice questions, MAE and Spearman ρ for score questions; ' +
      'Brier, log loss and ECE (top-label, 10 bins) for all. Definitions: docs/evaluation.md.',
  ];
  report.modes.forEach((mode, m) => lines.push('', ...modeSection(mode, m, svgFiles)));
  if (report.fit) lines.push('', ...fitSection(report.fit));
  return `${lines.join('\n')}\n`;
}

function modeSection(mode: EvaluationMode, m: number, svgFiles: Record<string, string>): string[] {
  const withSets = mode.questions.some((q) => q.prediction_sets !== null);
  const head = ['question', 'type', 'items', 'accuracy', 'macro-F1', 'MAE', 'Spearman ρ', 'Brier', 'log loss', 'ECE', 'answer mass'];
  if (withSets) head.push('set coverage', 'set size');
  const lines = [`## Mode ${m + 1}: ${modeTitle(mode)}`, '', `| ${head.join(' | ')} |`, `|${head.map(() => ' --- ').join('|')}|`];
  for (const q of mode.questions) lines.push(questionRow(q, withSets));
  const { median, p90, mean } = mode.latency_ms;
  lines.push('', `Latency per item: median ${median.toFixed(0)} ms, p90 ${p90.toFixed(0)} ms, mean ${mean.toFixed(0)} ms.`);
  const images = mode.questions.flatMap((q) =>
    (['reliability', 'confusion'] as const).flatMap((kind) => {
      const file = svgFiles[svgRef(kind, m, q.key)];
      return file ? [`![${kind} of ${escapeMarkdown(q.key)}](${encodeURI(file)})`] : [];
    }),
  );
  if (images.length > 0) lines.push('', images.join(' '));
  if (mode.errors.length > 0) {
    lines.push('', `Failed requests (${mode.errors.length}):`, '');
    for (const e of mode.errors) lines.push(`- line ${e.line}: ${escapeMarkdown(e.message)}`);
  }
  if (mode.wrong.length > 0) {
    const listed = mode.wrong.slice(0, WRONG_LISTED);
    lines.push(
      '',
      `Wrong answers (${mode.wrong.length}${mode.wrong.length > listed.length ? `, the first ${listed.length}` : ''}):`,
      '',
      '| line | id | question | expected | got | p(expected) | state |',
      '| --- | --- | --- | --- | --- | --- | --- |',
    );
    for (const w of listed) {
      lines.push(
        `| ${w.line} | ${escapeMarkdown(w.id ?? '')} | ${escapeMarkdown(w.key)} | ${escapeMarkdown(w.expected)} | ${escapeMarkdown(w.got)} | ${w.p_expected.toFixed(3)} | ${escapeMarkdown(w.state)} |`,
      );
    }
  }
  return lines;
}

function questionRow(q: QuestionMetrics, withSets: boolean): string {
  const cells = [
    escapeMarkdown(q.key),
    q.type,
    String(q.items),
    num(q.accuracy),
    num(q.macro_f1),
    num(q.mae),
    num(q.spearman),
    num(q.brier),
    num(q.log_loss),
    num(q.ece),
    num(q.mean_answer_mass),
  ];
  if (withSets) {
    cells.push(
      q.prediction_sets ? `${num(q.prediction_sets.coverage)} (α ${q.prediction_sets.alpha}${q.prediction_sets.cross_fold ? ', 2-fold' : ''})` : '–',
      q.prediction_sets ? num(q.prediction_sets.mean_size, 2) : '–',
    );
  }
  return `| ${cells.join(' | ')} |`;
}

function fitSection(fit: NonNullable<EvaluationReport['fit']>): string[] {
  const lines = [
    `## Fitted profile ${escapeMarkdown(fit.profile.id)}`,
    '',
    `Fitted on ${fit.fit_items.length} items, checked on ${fit.holdout_items.length} held-out items (calibrate ${fit.profile.calibrate ? 'on' : 'off'}).`,
    '',
    '| question | fit | fit items | held-out items | ECE before | ECE after | log loss before | log loss after |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const q of Object.values(fit.profile.questions)) {
    const method =
      q.fit.method === 'temperature'
        ? `temperature T = ${q.fit.temperature.toFixed(3)}`
        : q.fit.method === 'platt'
          ? `Platt a = ${q.fit.a.toFixed(3)}, b = ${q.fit.b.toFixed(3)}`
          : 'identity';
    const h = q.holdout;
    lines.push(
      `| ${escapeMarkdown(q.key)} | ${method} | ${q.fit_items} | ${h?.items ?? 0} | ${num(h?.ece_before ?? null)} | ${num(h?.ece_after ?? null)} | ${num(h?.log_loss_before ?? null)} | ${num(h?.log_loss_after ?? null)} |`,
    );
  }
  if (fit.notes.length > 0) lines.push('', ...fit.notes.map((note) => `- ${escapeMarkdown(note)}`));
  return lines;
}
