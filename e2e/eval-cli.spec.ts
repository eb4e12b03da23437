// `npm run eval` end to end (scripts/eval/run.ts): a 12-item set through the real engine in
// headless Chromium, on the e2e mirror's tiny-random-llama, with a profile fitted. The report's
// accuracy and Brier score are recomputed here from observations.jsonl, independently of
// src/evaluation; the SVGs are parsed by the browser's XML parser; profile.json is validated by
// the contract's schema. A malformed line makes the CLI exit 2, naming the line and the field.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { calibrationProfileSchema, parseDecisionRequest, questionFingerprint } from '../src/contract/index.ts';
import type { EvaluationReport } from '../src/evaluation/index.ts';
import type { ObservationLine } from '../scripts/eval/write-report.ts';
import { DIST, MIRROR, REPO } from './support/env.ts';

const ITEMS = 12;

function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['tsx', 'scripts/eval/run.ts', ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

let dir: string;
test.beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'jev-eval-cli-'));
});
test.afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('npm run eval writes a report whose numbers the observations reproduce, SVGs, and a valid profile', async ({ page }) => {
  test.setTimeout(300_000);
  const lines = readFileSync(join(REPO, 'eval/ticket-routing.jsonl'), 'utf8').trim().split('\n').slice(0, ITEMS);
  const data = join(dir, 'tickets.jsonl');
  writeFileSync(data, `${lines.join('\n')}\n`);
  const out = join(dir, 'out');
  const args = ['--data', data, '--model', 'tiny-random-llama', '--host', MIRROR, '--device', 'wasm', '--out', out, '--fit', 'p1', '--app', DIST];
  const run = await runCli(args);
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toContain('mode 1: calibrate off');

  const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as EvaluationReport;
  expect(report.object).toBe('evaluation_report');
  expect(report.data).toEqual({ name: 'tickets.jsonl', items: ITEMS });
  expect(report.model).toMatch(/^local\/jev-tiny-random-llama\./);
  // calibrate off, calibrate on, then the held-out items again with the fitted profile.
  expect(report.modes.map((m) => [m.calibrate, m.profile, m.held_out])).toEqual([
    [false, null, false],
    [true, null, false],
    [false, 'p1', true],
  ]);

  const observations = readFileSync(join(out, 'observations.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as ObservationLine);
  const labels = lines.map((l) => Object.keys(JSON.parse(l).labels).length).reduce((a, b) => a + b, 0);
  expect(observations.filter((o) => o.mode === 0)).toHaveLength(labels);
  expect(observations.filter((o) => o.mode === 2)).toHaveLength(report.fit!.holdout_items.length * 3);

  for (const [m, mode] of report.modes.entries()) {
    expect(mode.questions.map((q) => q.key).sort()).toEqual(['frustration', 'queue', 'urgent']);
    for (const q of mode.questions) {
      const obs = observations.filter((o) => o.mode === m && o.key === q.key);
      expect(obs.length).toBe(q.items);
      // Recomputed here: the top answer (first of equal maxima), and Σₖ (pₖ − yₖ)².
      const top = (p: number[]) => p.indexOf(Math.max(...p));
      const accuracy = obs.filter((o) => top(o.probabilities) === o.expected).length / obs.length;
      const brier = obs.map((o) => o.probabilities.reduce((s, p, k) => s + (p - (k === o.expected ? 1 : 0)) ** 2, 0)).reduce((a, b) => a + b, 0) / obs.length;
      expect(q.accuracy, `mode ${m} ${q.key} accuracy`).toBeCloseTo(accuracy, 12);
      expect(q.brier, `mode ${m} ${q.key} Brier`).toBeCloseTo(brier, 12);
      for (const o of obs) expect(o.probabilities.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);

      // The SVGs: well-formed XML (the browser's parser), one bar per non-empty bin of top probability, k² confusion cells.
      const bins = new Set(obs.map((o) => Math.min(9, Math.floor(Math.max(...o.probabilities) * 10)))).size;
      const reliability = readFileSync(join(out, `mode${m}-reliability-${q.key}.svg`), 'utf8');
      const confusion = readFileSync(join(out, `mode${m}-confusion-${q.key}.svg`), 'utf8');
      const parsed = await page.evaluate(
        ([a, b]) => {
          const parse = (s: string) => new DOMParser().parseFromString(s, 'image/svg+xml');
          const [r, c] = [parse(a), parse(b)];
          return {
            errors: r.getElementsByTagName('parsererror').length + c.getElementsByTagName('parsererror').length,
            roots: [r.documentElement.localName, c.documentElement.localName],
            titles: [r.querySelector('svg > title')?.textContent ?? '', c.querySelector('svg > title')?.textContent ?? ''],
            bars: r.querySelectorAll('rect.bin').length,
            cells: c.querySelectorAll('rect.cell').length,
          };
        },
        [reliability, confusion] as const,
      );
      expect(parsed.errors).toBe(0);
      expect(parsed.roots).toEqual(['svg', 'svg']);
      expect(parsed.titles[0]).toContain(q.key);
      expect(parsed.bars, `mode ${m} ${q.key} reliability bars`).toBe(bins);
      expect(parsed.cells).toBe(q.answers.length ** 2);
    }
  }

  const markdown = readFileSync(join(out, 'report.md'), 'utf8');
  expect(markdown).toContain('](mode0-reliability-queue.svg)');

  const profile = calibrationProfileSchema.parse(JSON.parse(readFileSync(join(out, 'profile.json'), 'utf8')));
  expect(profile).toEqual(report.fit!.profile);
  expect(profile.id).toBe('p1');
  expect(profile.model).toBe(report.model);
  const asked = parseDecisionRequest({ model: 'jev', ...JSON.parse(lines[0]!), labels: undefined }).questions;
  expect(Object.keys(profile.questions).sort()).toEqual(Object.values(asked).map(questionFingerprint).sort());
  expect(report.fit!.fit_items.length + report.fit!.holdout_items.length).toBe(ITEMS);
});

test('npm run eval refuses a malformed line: exit 2, naming the line and the field', async () => {
  const good = readFileSync(join(REPO, 'eval/ticket-routing.jsonl'), 'utf8').split('\n')[0]!;
  const bad = JSON.stringify({ ...JSON.parse(good), labels: { queue: 'sales' } });
  const data = join(dir, 'bad.jsonl');
  writeFileSync(data, `${good}\n\n${bad}\n`);
  const run = await runCli(['--data', data, '--model', 'tiny-random-llama', '--host', MIRROR, '--out', join(dir, 'bad-out'), '--app', DIST]);
  expect(run.code).toBe(2);
  expect(run.stderr).toContain('line 3, labels.queue: "sales" is not an option');
  expect(run.stdout).toBe('');
});
