/**
 * `npm run eval` on a labelled extraction set: the CLI in headless Chromium over the built app,
 * on TinyStories-656K. Its report's metrics are recomputed here from observations.jsonl by
 * independent code (exact match by direct comparison, AUROC by counting pairs), and a bad line is
 * refused with exit code 2, naming the line and the field.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import type { ExtractionObservation, ExtractionReport } from '../src/evaluation/index.ts';
import { DIST, MIRROR, REPO } from './support/env.ts';

function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn('npx', ['tsx', 'scripts/eval/run.ts', ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

test('npm run eval on an extraction set: report metrics equal a recomputation from its observations; a bad line exits 2 naming it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'jev-eval-extraction-'));
  try {
    const out = join(dir, 'out');
    const run = await runCli(['--data', 'eval/invoices.extraction.jsonl', '--limit', '6', '--model', 'TinyStories-656K', '--host', MIRROR, '--device', 'wasm', '--out', out, '--app', DIST]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('(extraction)');
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as ExtractionReport;
    const observations = readFileSync(join(out, 'observations.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as ExtractionObservation);
    expect(report.data.items).toBe(6);
    expect(observations).toHaveLength(6 * 5);
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toContain('## By field type');

    for (const m of report.by_field) {
      const obs = observations.filter((o) => o.key === m.key);
      const same = (a: unknown, b: unknown) => (typeof a === 'number' && typeof b === 'number' ? Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)) : JSON.stringify(a) === JSON.stringify(b));
      expect(m.exact_match, m.key).toBeCloseTo(obs.filter((o) => !o.refused && same(o.value, o.expected)).length / obs.length, 12);
      const answered = obs.filter((o) => !o.refused);
      const absent = answered.filter((o) => o.expected === null);
      const present = answered.filter((o) => o.expected !== null);
      if (absent.length === 0 || present.length === 0) expect(m.null_auroc).toBeNull();
      else {
        let wins = 0;
        for (const a of absent) for (const p of present) wins += a.pNull! > p.pNull! ? 1 : a.pNull === p.pNull ? 0.5 : 0;
        expect(m.null_auroc, m.key).toBeCloseTo(wins / (absent.length * present.length), 12);
      }
      expect(m.null_brier!, m.key).toBeCloseTo(answered.reduce((s, o) => s + (o.pNull! - (o.expected === null ? 1 : 0)) ** 2, 0) / answered.length, 12);
    }

    const bad = join(dir, 'bad.jsonl');
    const lines = readFileSync(join(REPO, 'eval/invoices.extraction.jsonl'), 'utf8').split('\n').slice(0, 2);
    const second = JSON.parse(lines[1]!);
    second.fields.total.decimals = 9;
    writeFileSync(bad, `${lines[0]}\n${JSON.stringify(second)}\n`);
    const refused = await runCli(['--data', bad, '--app', DIST]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('line 2, fields.total.decimals');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
