/**
 * The chat row of a bench target: time to first token and decode speed of `Engine.chat` against
 * transformers.js' `pipeline('text-generation')` on the same loaded model, alternating per
 * repetition; then a follow-up turn after a long history, with the prefix cache and cold
 * (docs/benchmarks.md, "Chat" and "Follow-up").
 */
import type { BenchPage } from './bench-page.ts';
import { fmt, round, type Timed } from './measure.ts';
import type { TargetPlan } from './plan.ts';
import { median, type ChatResult } from './schema.ts';
import { outsidePerStep } from './step-time.ts';

type Base = Pick<ChatResult, 'device' | 'model' | 'dtype'>;

export async function measureChat(p: BenchPage, plan: TargetPlan, base: Base, timed: Timed, log: (...a: unknown[]) => void): Promise<ChatResult> {
  const user = await p.call<string>('userText', plan.chat.promptTokens, 7);
  const samples: ChatResult['samples'] = { ttft_ms: [], decode_tps: [], baseline_ttft_ms: [], baseline_decode_tps: [], followup_ttft_ms: [], cold_followup_ttft_ms: [] };
  let promptTokens = 0;
  let newTokens = 0;
  let sameText = true;
  const shares = { engine: [] as number[], baseline: [] as number[], followup: [] as number[], cold_followup: [] as number[] };
  const outside: number[] = [];
  const inside: number[] = [];
  for (let rep = 0; rep < plan.chat.reps; rep++) {
    // A system line that differs per repetition: no KV reuse between repetitions.
    const messages = [
      { role: 'system', content: `Benchmark run ${rep + 1}. Answer the user.` },
      { role: 'user', content: user },
    ];
    const order = rep % 2 === 0 ? ['engine', 'baseline'] : ['baseline', 'engine'];
    let et = '';
    let bt = '';
    for (const way of order) {
      if (way === 'engine') {
        const { r, cpu } = await timed<{ ttft_ms: number; total_ms: number; decode_tps: number | null; prompt_tokens: number; tokens: number; text: string; decode_wall_ms: number; decode_run_ms: number; decode_steps: number }>('engineChat', messages, plan.chat.newTokens);
        shares.engine.push(cpu / (r.total_ms / 1000));
        const o = outsidePerStep(r.decode_wall_ms, r.decode_run_ms, r.decode_steps);
        if (o !== null) {
          outside.push(o);
          inside.push(r.decode_run_ms / r.decode_steps);
        }
        samples.ttft_ms.push(r.ttft_ms);
        if (r.decode_tps !== null) samples.decode_tps.push(r.decode_tps);
        promptTokens = r.prompt_tokens;
        newTokens = r.tokens;
        et = r.text;
      } else {
        const { r, cpu } = await timed<{ ttft_ms: number; total_ms: number; decode_tps: number | null; text: string }>('baselineChat', messages, plan.chat.newTokens);
        shares.baseline.push(cpu / (r.total_ms / 1000));
        samples.baseline_ttft_ms.push(r.ttft_ms);
        if (r.decode_tps !== null) samples.baseline_decode_tps.push(r.decode_tps);
        bt = r.text;
      }
    }
    sameText &&= et.trim() === bt.trim();
    log(
      `${plan.model} ${plan.device} chat rep ${rep + 1}/${plan.chat.reps}: ttft ${fmt(samples.ttft_ms.at(-1)!)} vs ${fmt(samples.baseline_ttft_ms.at(-1)!)}, ` +
        `decode ${samples.decode_tps.at(-1)?.toFixed(1)} vs ${samples.baseline_decode_tps.at(-1)?.toFixed(1)} tok/s` +
        (outside.length ? ` (engine per step: ${outside.at(-1)!.toFixed(3)} ms outside the graph, ${inside.at(-1)!.toFixed(2)} ms inside run)` : ''),
    );
  }

  // ---- follow-up turn after a long history: KV reuse vs cold prefill
  const history = await p.call<string>('userText', plan.followup.userTokens, 11);
  let fu = { history: 0, prompt: 0, cached: 0, coldCached: 0 };
  for (let rep = 0; rep < plan.followup.reps; rep++) {
    const system = { role: 'system', content: `Conversation ${rep + 1}.` };
    const first = [system, { role: 'user', content: history }];
    const turn1 = await p.call<{ text: string; prompt_tokens: number; tokens: number }>('engineChat', first, plan.followup.replyTokens);
    const second = [...first, { role: 'assistant', content: turn1.text }, { role: 'user', content: 'Thank you. Now say it again in one short line.' }];
    const { r: warmTurn, cpu: warmCpu } = await timed<{ ms: number; prompt_tokens: number; cached_tokens: number }>('engineFirstToken', second);
    shares.followup.push(warmCpu / (warmTurn.ms / 1000));
    // Cold: the same turn with the prefix cache cleared.
    await p.call('clearCache');
    const { r: coldTurn, cpu: coldCpu } = await timed<{ ms: number; prompt_tokens: number; cached_tokens: number }>('engineFirstToken', second);
    shares.cold_followup.push(coldCpu / (coldTurn.ms / 1000));
    samples.followup_ttft_ms.push(warmTurn.ms);
    samples.cold_followup_ttft_ms.push(coldTurn.ms);
    fu = { history: turn1.prompt_tokens + turn1.tokens, prompt: warmTurn.prompt_tokens, cached: warmTurn.cached_tokens, coldCached: coldTurn.cached_tokens };
    log(`${plan.model} ${plan.device} follow-up rep ${rep + 1}/${plan.followup.reps}: ${fmt(warmTurn.ms)} reusing ${warmTurn.cached_tokens}/${warmTurn.prompt_tokens} tokens vs cold ${fmt(coldTurn.ms)} (${coldTurn.cached_tokens} reused)`);
  }
  return {
    ...base,
    prompt_tokens: promptTokens,
    new_tokens: newTokens,
    ttft_ms: round(median(samples.ttft_ms)),
    decode_tps: round(median(samples.decode_tps), 2),
    baseline_ttft_ms: round(median(samples.baseline_ttft_ms)),
    baseline_decode_tps: round(median(samples.baseline_decode_tps), 2),
    followup_ttft_ms: round(median(samples.followup_ttft_ms)),
    cold_followup_ttft_ms: round(median(samples.cold_followup_ttft_ms)),
    followup_history_tokens: fu.history,
    followup_prompt_tokens: fu.prompt,
    followup_cached_tokens: fu.cached,
    cold_followup_cached_tokens: fu.coldCached,
    same_text: sameText,
    best: {
      ttft_ms: round(Math.min(...samples.ttft_ms)),
      decode_tps: round(Math.max(...samples.decode_tps), 2),
      baseline_ttft_ms: round(Math.min(...samples.baseline_ttft_ms)),
      baseline_decode_tps: round(Math.max(...samples.baseline_decode_tps), 2),
      followup_ttft_ms: round(Math.min(...samples.followup_ttft_ms)),
      cold_followup_ttft_ms: round(Math.min(...samples.cold_followup_ttft_ms)),
    },
    cpu_share: Object.fromEntries(Object.entries(shares).map(([k, v]) => [k, round(median(v), 2)])) as ChatResult['cpu_share'],
    decode_step_ms: { outside_graph: outside.length ? round(median(outside), 3) : null, inside_run: inside.length ? round(median(inside), 3) : null },
    reps: plan.chat.reps,
    followup_reps: plan.followup.reps,
    samples: Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, v.map((x) => round(x, 2))])) as ChatResult['samples'],
  };
}
