/**
 * The evaluation's pictures as self-contained SVG strings (no scripts, no external references,
 * no ids, so several can sit in one page): the reliability diagram and the confusion matrix of a
 * question. Labels are user data: every text is XML-escaped.
 */
import type { EvaluationReport, QuestionMetrics } from './types.ts';

const FONT = 'font-family="system-ui, sans-serif" font-size="11"';

/** Escapes text for XML content and attribute values. */
export function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);
}

function fixed(x: number, digits = 3): string {
  return Number.isFinite(x) ? x.toFixed(digits) : String(x);
}

function short(text: string, chars: number): string {
  return text.length > chars ? `${text.slice(0, chars - 1)}…` : text;
}

/**
 * The reliability diagram: per non-empty bin of top probability, a bar (class `bin`) as high as
 * the bin's accuracy, spanning the bin; a dot at the bin's mean confidence (class `confidence`);
 * the diagonal of perfect calibration. Each bar's <title> gives the bin's numbers.
 */
export function reliabilitySvg(metrics: Pick<QuestionMetrics, 'key' | 'items' | 'ece' | 'reliability'>): string {
  const size = 240;
  const left = 44;
  const top = 28;
  const width = left + size + 16;
  const height = top + size + 40;
  const x = (p: number) => left + p * size;
  const y = (p: number) => top + (1 - p) * size;
  const label = `Reliability of "${metrics.key}": ${metrics.items} items, ECE ${fixed(metrics.ece)}`;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeXml(label)}">`,
    `<title>${escapeXml(label)}</title>`,
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${left}" y="16" ${FONT} font-weight="bold">${escapeXml(short(`Reliability: ${metrics.key}`, 40))}</text>`,
    `<rect x="${left}" y="${top}" width="${size}" height="${size}" fill="none" stroke="#888"/>`,
  );
  for (const tick of [0, 0.25, 0.5, 0.75, 1]) {
    parts.push(
      `<text x="${x(tick)}" y="${top + size + 14}" ${FONT} text-anchor="middle">${tick}</text>`,
      `<text x="${left - 4}" y="${y(tick) + 4}" ${FONT} text-anchor="end">${tick}</text>`,
    );
  }
  for (const bin of metrics.reliability) {
    if (bin.count === 0) continue;
    const barTop = y(bin.accuracy);
    const note = `${fixed(bin.lower, 1)}–${fixed(bin.upper, 1)}: ${bin.count} items, accuracy ${fixed(bin.accuracy)}, confidence ${fixed(bin.confidence)}`;
    parts.push(
      `<rect class="bin" x="${fixed(x(bin.lower) + 1, 2)}" y="${fixed(barTop, 2)}" width="${fixed((bin.upper - bin.lower) * size - 2, 2)}" height="${fixed(top + size - barTop, 2)}" fill="#4e79a7" fill-opacity="0.8"><title>${escapeXml(note)}</title></rect>`,
      `<circle class="confidence" cx="${fixed(x(bin.confidence), 2)}" cy="${fixed(y(bin.confidence), 2)}" r="3" fill="#e15759"/>`,
    );
  }
  parts.push(
    `<line x1="${x(0)}" y1="${y(0)}" x2="${x(1)}" y2="${y(1)}" stroke="#555" stroke-dasharray="4 3"/>`,
    `<text x="${left + size / 2}" y="${top + size + 30}" ${FONT} text-anchor="middle">top probability (bars: accuracy, dots: confidence)</text>`,
    '</svg>',
  );
  return parts.join('\n');
}

/**
 * The confusion matrix: rows the expected answer, columns the most probable one; each cell holds
 * its count, shaded by its share of the row. Answer labels are shortened to 16 characters
 * (the <title> of a cell has them whole).
 */
export function confusionSvg(metrics: QuestionMetrics): string {
  const k = metrics.answers.length;
  const cell = Math.max(22, Math.min(48, Math.floor(320 / k)));
  const left = 120;
  const top = 110;
  const width = left + k * cell + 16;
  const height = top + k * cell + 30;
  const label = `Confusion matrix of "${metrics.key}": ${metrics.items} items, rows expected, columns predicted`;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeXml(label)}">`,
    `<title>${escapeXml(label)}</title>`,
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="8" y="16" ${FONT} font-weight="bold">${escapeXml(short(`Confusion: ${metrics.key}`, 48))}</text>`,
    `<text x="${left}" y="34" ${FONT}>predicted →</text>`,
    `<text x="8" y="${top - 6}" ${FONT}>expected ↓</text>`,
  ];
  metrics.answers.forEach((answer, j) => {
    const cx = left + j * cell + cell / 2;
    parts.push(`<text x="${cx}" y="${top - 6}" ${FONT} transform="rotate(-45 ${cx} ${top - 6})">${escapeXml(short(answer, 16))}</text>`);
  });
  metrics.confusion.forEach((row, i) => {
    const rowTotal = row.reduce((a, b) => a + b, 0);
    const expected = metrics.answers[i]!;
    parts.push(`<text x="${left - 6}" y="${top + i * cell + cell / 2 + 4}" ${FONT} text-anchor="end">${escapeXml(short(expected, 16))}</text>`);
    row.forEach((count, j) => {
      const share = rowTotal > 0 ? count / rowTotal : 0;
      const note = `expected ${expected}, predicted ${metrics.answers[j]!}: ${count}`;
      parts.push(
        `<rect class="cell" x="${left + j * cell}" y="${top + i * cell}" width="${cell}" height="${cell}" fill="#4e79a7" fill-opacity="${fixed(0.05 + 0.9 * share, 3)}" stroke="#fff"><title>${escapeXml(note)}</title></rect>`,
        `<text x="${left + j * cell + cell / 2}" y="${top + i * cell + cell / 2 + 4}" ${FONT} text-anchor="middle" fill="${share > 0.5 ? '#fff' : '#000'}">${count}</text>`,
      );
    });
  });
  parts.push('</svg>');
  return parts.join('\n');
}

/** One SVG of a report, with a file name safe on every file system (`mode0-reliability-intent.svg`). */
export interface ReportSvg {
  /** The lookup key reportMarkdown takes: `reliability:<mode>:<question key>` or `confusion:<mode>:<question key>`. */
  ref: string;
  fileName: string;
  svg: string;
}

/** Every SVG of a report: per mode and question, the reliability diagram and the confusion matrix. */
export function reportSvgs(report: EvaluationReport): ReportSvg[] {
  const used = new Set<string>();
  return report.modes.flatMap((mode, m) =>
    mode.questions.flatMap((q) =>
      (['reliability', 'confusion'] as const).map((kind) => {
        const base = `mode${m}-${kind}-${q.key.replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 40) || 'q'}`;
        let fileName = `${base}.svg`;
        for (let n = 2; used.has(fileName); n++) fileName = `${base}-${n}.svg`;
        used.add(fileName);
        return { ref: svgRef(kind, m, q.key), fileName, svg: kind === 'reliability' ? reliabilitySvg(q) : confusionSvg(q) };
      }),
    ),
  );
}

export function svgRef(kind: 'reliability' | 'confusion', mode: number, key: string): string {
  return `${kind}:${mode}:${key}`;
}
