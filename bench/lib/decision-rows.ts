/**
 * The decision rows of a bench target: for each state size S, `Engine.decide` with the first Q
 * questions against the naive way (one full-prompt forward pass per question, what a
 * transformers.js user writes), alternating which goes first per repetition; medians, the
 * token-count ceiling and the CPU shares (docs/benchmarks.md, "Decisions").
 */
import type { BenchPage } from './bench-page.ts';
import { fmt, round, type Timed } from './measure.ts';
import type { TargetPlan } from './plan.ts';
import { median, type DecisionResult } from './schema.ts';

/** A state measured, for the prefix-cache rows that ask about it again. */
export interface MeasuredState {
  key: string;
  stateTokens: number;
  prefixTokens: number;
  reps: number;
}

type Base = Pick<DecisionResult, 'device' | 'model' | 'dtype'>;

/**
 * A state whose repetition takes under SHORT_REP_MS is short: its first repetition only warms up,
 * and it gets as many repetitions as fill FILL_MS (at most MAX_SHORT_REPS).
 */
const SHORT_REP_MS = 2000;
const FILL_MS = 8000;
const MAX_SHORT_REPS = 25;

export async function measureDecisions(
  p: BenchPage,
  plan: TargetPlan,
  base: Base,
  timed: Timed,
  notes: string[],
  log: (...a: unknown[]) => void,
): Promise<{ decisions: DecisionResult[]; measuredStates: MeasuredState[] }> {
  const decisions: DecisionResult[] = [];
  const measuredStates: MeasuredState[] = [];
  const qmax = Math.max(...plan.questions);
  for (const [si, state] of plan.states.entries()) {
    try {
      const key = `s${state.tokens}`;
      const setup = await p.call<{ stateTokens: number; prefixTokens: number; rows: number; firstTokensDistinct: boolean; sameContext: number }>(
        'setupDecisions',
        key,
        state.tokens,
        1000 + si,
      );
      measuredStates.push({ key, stateTokens: setup.stateTokens, prefixTokens: setup.prefixTokens, reps: Math.max(1, Math.min(3, state.reps)) });
      const engine = new Map<number, { ms: number[]; cpu: number[]; tokens: number; passes: number; probs: Record<string, number>[] }>();
      const naive = { ms: new Map<number, number[]>(), cpu: new Map<number, number[]>(), tokens: [] as number[], probs: [] as Record<string, number>[], same: [] as boolean[] };
      const repetition = async (rep: number) => {
        // Alternate which way goes first, so drift and other load on the machine hit both alike.
        const order = rep % 2 === 0 ? ['engine', 'naive'] : ['naive', 'engine'];
        for (const way of order) {
          if (way === 'engine') {
            for (const q of plan.questions) {
              const { r, cpu } = await timed<{ ms: number; tokens: number; passes: number; probs: Record<string, number>[] }>('engineDecision', key, q);
              const e = engine.get(q) ?? { ms: [], cpu: [], tokens: r.tokens, passes: r.passes, probs: r.probs };
              e.ms.push(r.ms);
              e.cpu.push(cpu);
              engine.set(q, e);
            }
          } else {
            // The naive way keeps nothing between questions, so a request of Q questions is
            // exactly the first Q passes: one run of Q = max gives every Q.
            let wall = 0;
            let cpu = 0;
            const tokens: number[] = [];
            const probs: Record<string, number>[] = [];
            const same: boolean[] = [];
            const cumulative: { ms: number; cpu: number }[] = [];
            for (let i = 0; i < qmax; i++) {
              const { r, cpu: c } = await timed<{ ms: number; tokens: number; probs: Record<string, number>; sameContext: boolean }>('naivePass', key, i);
              wall += r.ms;
              cpu += c;
              tokens.push(r.tokens);
              probs.push(r.probs);
              same.push(r.sameContext);
              cumulative.push({ ms: wall, cpu });
            }
            for (const q of plan.questions) {
              naive.ms.set(q, [...(naive.ms.get(q) ?? []), cumulative[q - 1]!.ms]);
              naive.cpu.set(q, [...(naive.cpu.get(q) ?? []), cumulative[q - 1]!.cpu]);
            }
            naive.tokens = tokens;
            naive.probs = probs;
            naive.same = same;
          }
        }
      };
      const logRepetition = (rep: number, reps: number) =>
        log(
          `${plan.model} ${plan.device} S=${state.tokens} rep ${rep + 1}/${reps}: ` +
            plan.questions.map((q) => `Q=${q} engine ${fmt(engine.get(q)!.ms.at(-1)!)} naive ${fmt(naive.ms.get(q)!.at(-1)!)}`).join(', '),
        );
      const t0 = performance.now();
      await repetition(0);
      const firstMs = performance.now() - t0;
      let reps = state.reps;
      let next = 1;
      if (firstMs < SHORT_REP_MS) {
        // Short cells: the first repetition (new shapes, first allocations) was slower, and a
        // median of a few milliseconds must not be decided by one slow sample.
        engine.clear();
        naive.ms.clear();
        naive.cpu.clear();
        reps = Math.max(state.reps, Math.min(MAX_SHORT_REPS, Math.ceil(FILL_MS / firstMs)));
        next = 0;
        log(`${plan.model} ${plan.device} S=${state.tokens}: a repetition takes ${fmt(firstMs)}; warmed up, now ${reps} repetitions`);
      } else logRepetition(0, reps);
      for (let rep = next; rep < reps; rep++) {
        await repetition(rep);
        logRepetition(rep, reps);
      }
      const e16 = engine.get(qmax)!;
      let maxDiff: number | null = null;
      naive.probs.forEach((np, i) => {
        if (!naive.same[i]) return;
        for (const [answer, pn] of Object.entries(np)) {
          const pe = e16.probs[i]?.[answer];
          if (pe !== undefined) maxDiff = Math.max(maxDiff ?? 0, Math.abs(pe - pn));
        }
      });
      for (const q of plan.questions) {
        const e = engine.get(q)!;
        const naiveTokens = naive.tokens.slice(0, q).reduce((a, b) => a + b, 0);
        const engineMs = median(e.ms);
        const naiveMs = median(naive.ms.get(q)!);
        const speedup = naiveMs / engineMs;
        const ceiling = naiveTokens / e.tokens;
        decisions.push({
          ...base,
          questions: q,
          state_tokens: setup.stateTokens,
          prefix_tokens: setup.prefixTokens,
          engine_ms: round(engineMs),
          naive_ms: round(naiveMs),
          speedup: round(speedup, 3),
          ceiling: round(ceiling, 3),
          efficiency: round(speedup / ceiling, 3),
          engine_tokens: e.tokens,
          naive_tokens: naiveTokens,
          engine_passes: e.passes,
          naive_passes: q,
          reps,
          engine_min_ms: round(Math.min(...e.ms)),
          naive_min_ms: round(Math.min(...naive.ms.get(q)!)),
          speedup_best: round(Math.min(...naive.ms.get(q)!) / Math.min(...e.ms), 3),
          engine_samples_ms: e.ms.map((x) => round(x)),
          naive_samples_ms: naive.ms.get(q)!.map((x) => round(x)),
          engine_cpu_s: round(median(e.cpu), 2),
          naive_cpu_s: round(median(naive.cpu.get(q)!), 2),
          speedup_cpu: round(median(naive.cpu.get(q)!) / median(e.cpu), 3),
          engine_cpu_share: round(median(e.cpu.map((c, i) => c / (e.ms[i]! / 1000))), 2),
          naive_cpu_share: round(median(naive.cpu.get(q)!.map((c, i) => c / (naive.ms.get(q)![i]! / 1000))), 2),
          max_prob_diff: maxDiff === null ? null : Number((maxDiff as number).toExponential(2)),
        });
      }
      if (setup.rows > 0 || !setup.firstTokensDistinct) {
        log(`${plan.model}: ${setup.rows} label rows (labels sharing a first token): the engine reads them exactly, the naive way reads first tokens only`);
      }
    } catch (e) {
      // One configuration failing (say, a state too long for the model) loses only itself.
      const note = `${plan.model} ${plan.device} S=${state.tokens}: not measured (${(e as Error).message.split('\n')[0]})`;
      log(note);
      notes.push(note);
    }
  }
  return { decisions, measuredStates };
}
