// The report's pictures and Markdown (src/evaluation/svg.ts, report-markdown.ts): real content,
// and user text (question keys, answers, states) escaped, never markup.
import { describe, expect, it } from 'vitest';
import {
  confusionSvg,
  questionMetrics,
  reliabilitySvg,
  reportMarkdown,
  reportSvgs,
  type EvaluationReport,
  type Observation,
} from '../../src/evaluation/index.ts';

const NASTY = 'x<&"y';

function observations(key: string, answers: string[], rows: [number[], number][]): Observation[] {
  return rows.map(([probabilities, expected], item) => ({ item, key, type: 'choice', answers, probabilities, expected, answerMass: 0.4, latencyMs: 5 }));
}

// Top probabilities 0.62, 0.5, 0.65, 0.9 → bins 6, 5, 6, 9: three non-empty bins.
const CHOICE = questionMetrics(
  observations(NASTY, [NASTY, 'b', 'c|d'], [
    [[0.62, 0.28, 0.1], 0],
    [[0.5, 0.3, 0.2], 1],
    [[0.25, 0.65, 0.1], 1],
    [[0.05, 0.05, 0.9], 2],
  ]),
);
const OTHER = questionMetrics(observations('plain', ['yes', 'no'], [[[0.8, 0.2], 0], [[0.3, 0.7], 0]]));

/** Every & starts an entity; no < other than a tag's. */
function wellEscaped(svg: string): boolean {
  return !/&(?!(amp|lt|gt|quot|apos);)/.test(svg) && !svg.includes('x<&') && !svg.includes('"y');
}

describe('SVG', () => {
  it('reliability diagram: one bar per non-empty bin, labelled, escaped', () => {
    const svg = reliabilitySvg(CHOICE);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(svg.match(/<rect class="bin"/g)).toHaveLength(3);
    expect(svg.match(/<circle class="confidence"/g)).toHaveLength(3);
    expect(svg).toMatch(/role="img" aria-label="Reliability of &quot;x&lt;&amp;&quot;y&quot;: 4 items, ECE /);
    expect(svg).toContain('<title>Reliability of &quot;x&lt;&amp;&quot;y&quot;');
    expect(svg).toContain('<title>0.6–0.7: 2 items, accuracy 1.000, confidence 0.635</title>');
    expect(wellEscaped(svg)).toBe(true);
    // A bar's height is its accuracy: bin 5 (accuracy 0) is a bar of height 0.
    expect(svg).toMatch(/<rect class="bin" x="[\d.]+" y="[\d.]+" width="[\d.]+" height="0.00"/);
  });

  it('confusion matrix: K² cells with their counts, escaped labels', () => {
    const svg = confusionSvg(CHOICE);
    expect(svg.match(/<rect class="cell"/g)).toHaveLength(9);
    expect(svg).toContain(`<title>expected b, predicted ${'x&lt;&amp;&quot;y'}: 1</title>`);
    expect(svg).toContain('<title>expected c|d, predicted c|d: 1</title>');
    expect(svg).toContain('>x&lt;&amp;&quot;y</text>');
    expect(wellEscaped(svg)).toBe(true);
  });
});

describe('Markdown', () => {
  const report: EvaluationReport = {
    object: 'evaluation_report',
    created: '2026-01-01T00:00:00.000Z',
    model: 'tiny@abc',
    device: 'wasm',
    data: { name: 'set|1.jsonl', items: 4 },
    modes: [
      {
        calibrate: false,
        profile: null,
        held_out: false,
        alpha: null,
        questions: [CHOICE, OTHER],
        wrong: [{ item: 1, line: 2, id: 'a*b', key: NASTY, expected: 'b', got: NASTY, p_expected: 0.3, state: 'line one\nline | two <b>' }],
        latency_ms: { median: 12.4, p90: 20, mean: 13 },
        errors: [{ item: 3, line: 4, message: 'boom | bang' }],
      },
      { calibrate: true, profile: 'p1', held_out: true, alpha: 0.1, questions: [OTHER], wrong: [], latency_ms: { median: 1, p90: 1, mean: 1 }, errors: [] },
    ],
    fit: null,
  };
  const svgs = reportSvgs(report);
  const md = reportMarkdown(report, Object.fromEntries(svgs.map((s) => [s.ref, `svg/${s.fileName}`])));

  it('one table row per question and mode, user text escaped', () => {
    const rows = md.split('\n').filter((l) => l.startsWith('| ') && !/^\| (question|line|---)/.test(l));
    const wrongRows = md.split('\n').filter((l) => l.startsWith('| 2 |'));
    expect(wrongRows).toHaveLength(1);
    expect(rows.filter((l) => !l.startsWith('| 2 |'))).toHaveLength(3); // mode 1: 2 questions; mode 2: 1
    expect(md).toContain('| x\\<&amp;"y | choice | 4 | 0.750 | ');
    expect(md).toContain('| plain | choice | 2 | 0.500 | ');
    // The wrong answer's state: one line, pipes and tags escaped.
    expect(wrongRows[0]).toContain('line one line \\| two \\<b\\>');
    expect(wrongRows[0]!.split(/(?<!\\)\|/)).toHaveLength(9); // 7 cells between 8 unescaped pipes
    expect(md).toContain('- line 4: boom \\| bang');
    expect(md).toContain('## Mode 2: calibrate on, profile p1, prediction sets α = 0.1, held-out items only');
    expect(md).toContain('Latency per item: median 12 ms, p90 20 ms, mean 13 ms.');
  });

  it('links every SVG by a safe file name', () => {
    expect(svgs).toHaveLength(6); // (2 + 1) questions × 2 pictures
    expect(new Set(svgs.map((s) => s.fileName)).size).toBe(6);
    expect(svgs.every((s) => /^[A-Za-z0-9_.-]+$/.test(s.fileName))).toBe(true);
    expect(md.match(/!\[(reliability|confusion) of /g)).toHaveLength(6);
    expect(md).toContain(`(svg/${svgs[0]!.fileName})`);
  });
});
