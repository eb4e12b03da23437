/** The arithmetic of a decode step's time outside the graph (bench/lib/step-time.ts) and the bench's ort-builds plan. */
import { describe, expect, it } from 'vitest';
import { decodeSteps, outsidePerStep, quantile, spread } from '../../bench/lib/step-time.ts';
import { ortBuildPlan } from '../../bench/lib/ort-build-rows.ts';
import { chromiumOfUserAgent } from '../../bench/lib/schema.ts';
import { parseBenchArgs } from '../../bench/lib/options.ts';

describe('decodeSteps', () => {
  it('splits each step at the session run: outside = wall − run, per step and on the whole', () => {
    // A fake decode: 4 steps of 2, 3, 10 (a stall) and 5 ms, of which 1.5, 2, 2.5, 4 ms inside run.
    const d = decodeSteps([2, 3, 10, 5], [1.5, 2, 2.5, 4]);
    expect(d.decode_steps).toBe(4);
    expect(d.decode_tps).toBeCloseTo(4000 / 20, 10);
    expect(d.step_ms_median).toBe(4);
    expect(d.decode_tps_median_step).toBe(250);
    expect(d.run_ms_median).toBe(2.25);
    // outside per step: 0.5, 1, 7.5, 1 → median 1
    expect(d.outside_ms_median).toBe(1);
    expect(d.outside_ms_mean).toBe((20 - 10) / 4);
    expect(d.step_ms_max).toBe(10);
    expect(d.step_ms_p90).toBeCloseTo(10 - 0.3 * 5, 10);
  });

  it('tolerates a coarse timer, refuses a run longer than its step and unequal lengths', () => {
    expect(decodeSteps([1, 1], [1.1, 0.5]).outside_ms_median).toBe(0.25);
    expect(() => decodeSteps([1, 1], [2, 0.5])).toThrow(/step 0 ran 2 ms inside a step of 1 ms/);
    expect(() => decodeSteps([1, 2], [1])).toThrow(/2 step times against 1 run times/);
    expect(() => decodeSteps([], [])).toThrow(/no steps/);
  });

  it('from totals (the chat row): (wall − run) ÷ steps, none without steps', () => {
    expect(outsidePerStep(630, 567, 63)).toBe(1);
    expect(outsidePerStep(10, 12, 5)).toBe(0);
    expect(outsidePerStep(10, 5, 0)).toBeNull();
    expect(outsidePerStep(NaN, 5, 3)).toBeNull();
  });

  it('quantiles and spreads', () => {
    expect(quantile([3, 1, 2], 0.5)).toBe(2);
    expect(quantile([1, 2, 3, 4], 1)).toBe(4);
    expect(quantile([1, 2, 3, 4], 0)).toBe(1);
    expect(quantile([], 0.5)).toBeNaN();
    expect(spread([5, 1, 3])).toEqual({ median: 3, min: 1, max: 5 });
  });
});

describe('the ort-builds mode', () => {
  it('is an --only choice, with --max-load', () => {
    const o = parseBenchArgs(['--only', 'ort-builds', '--max-load', '3', '--json', 'x.json']);
    expect(o.only).toBe('ort-builds');
    expect(o.maxLoad).toBe(3);
    expect(() => parseBenchArgs(['--only', 'ort-build'])).toThrow(/ort-builds/);
  });

  it('plans both models, fp32 and q8, 1 and the machine\'s threads, unless told', () => {
    const o = parseBenchArgs(['--only', 'ort-builds', '--json', 'x.json']);
    const p = ortBuildPlan(o, { models: ['TinyStories-656K', 'smollm2-135m-random'], cores: 2 });
    expect(p).toMatchObject({ models: ['TinyStories-656K', 'smollm2-135m-random'], dtypes: ['fp32', 'q8'], threads: [1, 2], reps: 5, promptTokens: 400, decodeTokens: 64 });
    expect(ortBuildPlan(o, { models: ['m'], cores: 1 }).threads).toEqual([1]);
    const q = ortBuildPlan(parseBenchArgs(['--only', 'ort-builds', '--quick', '--threads', '2', '--dtypes', 'q4,q8', '--models', 'm', '--json', 'x']), { models: [], cores: 2 });
    expect(q).toMatchObject({ models: ['m'], dtypes: ['q8'], threads: [2], reps: 2, decodeTokens: 16 });
    // No measurable dtype named: fp32.
    expect(ortBuildPlan(parseBenchArgs(['--dtypes', 'q4', '--json', 'x']), { models: ['m'], cores: 2 }).dtypes).toEqual(['fp32']);
  });
});

describe('chromiumOfUserAgent', () => {
  it('reads the version from a headless or a headed userAgent', () => {
    expect(chromiumOfUserAgent('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.8078.108 Safari/537.36')).toBe('156.0.8078.108');
    expect(chromiumOfUserAgent('Mozilla/5.0 … Chrome/150.0.0.0 Safari/537.36')).toBe('150.0.0.0');
    expect(chromiumOfUserAgent('Mozilla/5.0 Firefox/140.0')).toBeNull();
    expect(chromiumOfUserAgent(null)).toBeNull();
  });
});
