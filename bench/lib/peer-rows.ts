/** The wllama peer's rows of `npm run bench` (the peer itself: bench/peers/). */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { GENERATED, VENDORED } from '../../scripts/models/roots.ts';
import { launchChromium } from '../peers/browser.ts';
import { checkModels, summarize } from '../peers/check-wllama.ts';
import { PEER_DTYPES, peerModel } from '../peers/models.ts';
import { runWllamaPeers } from '../peers/wllama-peer.ts';
import { log } from './measure.ts';
import type { BenchOptions } from './options.ts';
import { TINYSTORIES, type TargetPlan } from './plan.ts';
import type { BenchResult } from './schema.ts';

/**
 * The wllama peer (bench/peers/): first the equal-work check (same tokenization, same greedy tokens
 * on both runtimes), then prefill and decode side by side at 1 thread and at the page's thread count.
 */
export async function runPeers(plans: TargetPlan[], formatModels: string[], options: BenchOptions, result: BenchResult): Promise<void> {
  const dtypes = PEER_DTYPES.filter((d) => (options.dtypes as string[]).includes(d));
  const models = [...new Set([...plans.filter((p) => p.device === 'wasm').map((p) => p.model), ...formatModels])].filter((name) => {
    const m = peerModel(name);
    const gguf = join(name === TINYSTORIES ? VENDORED : GENERATED, name, m.gguf);
    if (existsSync(gguf)) return true;
    result.notes.push(`${name}: no GGUF at ${gguf}, so no wllama peer (\`npm run models\` writes it).`);
    return false;
  });
  if (!models.length || !dtypes.length) return;
  const marker = `peers-${process.pid}-${Date.now()}`;
  const browser = await launchChromium(marker);
  try {
    log(`wllama peer: checking equal work on ${models.join(', ')} (${dtypes.join(', ')})`);
    try {
      const agreement = await checkModels(browser, models, { steps: 24, build: true, dtypes });
      for (const a of agreement) {
        log(summarize(a));
        result.peer_agreement.push({
          model: a.model,
          dtype: a.dtype,
          bound: a.bound,
          pass: a.pass,
          greedy_steps: a.greedy.steps,
          identical_greedy_tokens: a.greedy.identical,
          greedy_first_mismatch: a.greedy.first_mismatch,
          max_abs_dlogprob_top: Number(a.greedy.max_abs_dlogprob_top.toExponential(2)),
          tokenization_agree: `${a.tokenization.filter((t) => t.agree).length}/${a.tokenization.length}`,
        });
        if (!a.pass) result.notes.push(`${a.model} ${a.dtype}: wllama and the engine disagree (see peer_agreement): its peer rows compare unequal work.`);
      }
    } catch (e) {
      const note = `wllama equal-work check failed (${(e as Error).message.split('\n')[0]})`;
      log(note);
      result.notes.push(note);
    }
    try {
      // tiny-random-llama (1,024 ids, 128 of them lone bytes ≥ 0x80) soon generates a partial UTF-8
      // piece, and wllama 3.8.1's server then fails writing the text ("Invalid typed array length"):
      // it gets the equal-work check above (which bans those ids on both sides), not the timing.
      const timed = models.filter((m) => m !== 'tiny-random-llama');
      if (timed.length < models.length) result.notes.push('tiny-random-llama: equal-work check only; wllama 3.8.1 fails on the partial UTF-8 pieces its greedy text soon contains, so no peer timing.');
      const peers = await runWllamaPeers(browser, {
        models: timed,
        dtypes,
        ...(options.threads ? { threads: [...new Set([1, options.threads])] } : {}),
        reps: options.peerReps ?? (options.quick ? 1 : 3),
        promptTokens: 400,
        decodeTokens: options.quick ? 16 : 64,
        build: false,
        marker,
        log: (l) => log(l.trim()),
      });
      result.peers.push(...peers.rows);
      result.peer_details.push(...peers.details);
    } catch (e) {
      const note = `wllama peer: not measured (${(e as Error).message.split('\n')[0]})`;
      log(note);
      result.notes.push(note);
    }
  } finally {
    await browser.close();
  }
}
