/**
 * The prefix cache's rows (docs/prefix-cache.md): what a request gains when an earlier request
 * left its prompt in the engine's cache.
 *
 * - Decisions, per state size S and question count Q: `first` is a decision of questions A from
 *   cold (cache cleared); `repeat` is a decision on the same state with other questions B, right
 *   after it, so the state comes from the cache; `cold_repeat` is that same B request from cold,
 *   the same work without the cache. `cached_tokens` counts the tokens the repeat did not feed;
 *   `max_prob_diff` compares its answers with the cold ones.
 * - Chat: two new conversations that share a long system prompt: the second one's time to first
 *   token against the same conversation from cold.
 *
 * Every time is taken in the worker (bench/page/bench.worker.ts); the cache is cleared between
 * repetitions.
 */
import type { BenchPage } from './bench-page.ts';
import type { TargetPlan } from './plan.ts';
import { median, type PrefixCacheResult, type PrefixChatResult } from './schema.ts';

type Base = Pick<PrefixCacheResult, 'model' | 'device' | 'dtype'>;
interface DecisionRun {
  ms: number;
  tokens: number;
  cached_tokens: number;
  probs: Record<string, number>[];
}
interface FirstToken {
  ms: number;
  prompt_tokens: number;
  cached_tokens: number;
}

/** Question counts measured: 1 and 4 where the pool has twice as many questions (A and B differ). */
const QUESTIONS = [1, 4];
const SYSTEM_TOKENS = { wasm: 480, webgpu: 120 } as const;

export async function measurePrefixCache(
  p: BenchPage,
  plan: TargetPlan,
  base: Base,
  states: { key: string; stateTokens: number; prefixTokens: number; reps: number }[],
  contextLength: number,
  log: (line: string) => void,
): Promise<{ decisions: PrefixCacheResult[]; chat: PrefixChatResult | null }> {
  const decisions: PrefixCacheResult[] = [];
  for (const state of states) {
    for (const q of QUESTIONS) {
      const first: number[] = [];
      const repeat: number[] = [];
      const coldRepeat: number[] = [];
      let last: { first: DecisionRun; repeat: DecisionRun; cold: DecisionRun } | null = null;
      let maxDiff = 0;
      for (let rep = 0; rep < state.reps; rep++) {
        const a = await p.call<DecisionRun>('engineDecision', state.key, q, { from: 0 });
        const b = await p.call<DecisionRun>('engineDecision', state.key, q, { from: q, keep: true });
        const cold = await p.call<DecisionRun>('engineDecision', state.key, q, { from: q });
        first.push(a.ms);
        repeat.push(b.ms);
        coldRepeat.push(cold.ms);
        maxDiff = Math.max(maxDiff, probDiff(b.probs, cold.probs));
        last = { first: a, repeat: b, cold };
      }
      const row: PrefixCacheResult = {
        ...base,
        state_tokens: state.stateTokens,
        prefix_tokens: state.prefixTokens,
        questions: q,
        first_ms: round(median(first)),
        repeat_ms: round(median(repeat)),
        cold_repeat_ms: round(median(coldRepeat)),
        speedup: round(median(first) / median(repeat), 2),
        speedup_same_work: round(median(coldRepeat) / median(repeat), 2),
        cached_tokens: last!.repeat.cached_tokens,
        first_tokens: last!.first.tokens,
        repeat_tokens: last!.repeat.tokens,
        cold_repeat_tokens: last!.cold.tokens,
        max_prob_diff: Number(maxDiff.toExponential(2)),
        reps: state.reps,
      };
      row.ceiling = round(row.first_tokens / row.repeat_tokens, 3);
      row.efficiency = round(row.speedup / row.ceiling, 3);
      decisions.push(row);
      log(
        `${base.model} ${base.device} prefix cache S=${row.state_tokens} Q=${q}: first ${row.first_ms} ms, repeat ${row.repeat_ms} ms ` +
          `(${row.speedup}× of a ${row.ceiling}× token ceiling, ${Math.round(row.efficiency * 100)}%; same questions from cold ${row.cold_repeat_ms} ms, ${row.speedup_same_work}×), ${row.cached_tokens} tokens reused, max |Δp| ${row.max_prob_diff}`,
      );
    }
  }

  // Chat: two conversations that share a long system prompt.
  let chat: PrefixChatResult | null = null;
  // Half the context at most (TinyStories holds 512 tokens): the template and the user turn must fit.
  const systemTokens = Math.min(SYSTEM_TOKENS[base.device], Math.floor(contextLength / 2));
  const system = { role: 'system', content: await p.call<string>('userText', systemTokens, 21) };
  const one = [system, { role: 'user', content: 'My invoice for March was charged twice. Can you fix it?' }];
  const two = [system, { role: 'user', content: 'How do I move to the yearly plan?' }];
  const reps = Math.max(1, Math.min(3, plan.chat.reps));
  const firstMs: number[] = [];
  const repeatMs: number[] = [];
  const coldMs: number[] = [];
  let lastRepeat: FirstToken | null = null;
  for (let rep = 0; rep < reps; rep++) {
    await p.call('clearCache');
    const a = await p.call<FirstToken>('engineFirstToken', one);
    const b = await p.call<FirstToken>('engineFirstToken', two);
    await p.call('clearCache');
    const cold = await p.call<FirstToken>('engineFirstToken', two);
    firstMs.push(a.ms);
    repeatMs.push(b.ms);
    coldMs.push(cold.ms);
    lastRepeat = b;
  }
  chat = {
    ...base,
    system_tokens: systemTokens,
    prompt_tokens: lastRepeat!.prompt_tokens,
    cached_tokens: lastRepeat!.cached_tokens,
    first_ttft_ms: round(median(firstMs)),
    repeat_ttft_ms: round(median(repeatMs)),
    cold_repeat_ttft_ms: round(median(coldMs)),
    speedup_same_work: round(median(coldMs) / median(repeatMs), 2),
    reps,
  };
  log(
    `${base.model} ${base.device} prefix cache chat: a new conversation sharing a ${systemTokens}-token system prompt: ${chat.repeat_ttft_ms} ms to first token ` +
      `(${chat.cached_tokens}/${chat.prompt_tokens} reused) vs ${chat.cold_repeat_ttft_ms} ms cold (${chat.speedup_same_work}×)`,
  );
  return { decisions, chat };
}

/** The largest difference between two runs' answer probabilities. */
function probDiff(a: readonly Record<string, number>[], b: readonly Record<string, number>[]): number {
  let d = 0;
  a.forEach((pa, i) => {
    for (const [k, v] of Object.entries(pa)) d = Math.max(d, Math.abs(v - (b[i]?.[k] ?? NaN)));
  });
  return Number.isNaN(d) ? Infinity : d;
}

function round(x: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
