/**
 * Equal work, checked: wllama (llama.cpp b11364 in wasm) on the GGUF and this engine
 * (transformers.js + onnxruntime-web, wasm) on the ONNX file of the same weights, side by side in one
 * headless Chromium page, both single-threaded, flash attention off and an f32 KV cache on the
 * llama.cpp side.
 *
 *   tokenization  for each test string, the engine's token ids vs what llama.cpp made of the same
 *                 text. wllama 3.8.1 exposes no tokenize call and takes prompts only as text, so the
 *                 comparison is at the model: the prompt token count (usage.prompt_tokens) must be the
 *                 engine's, and the next-token top-k (ids and log-probs) after the prompt must agree —
 *                 a different token anywhere in the prompt changes that distribution grossly.
 *   greedy        `steps` greedy tokens after the model's prompt: identical ids at every step, and the
 *                 log-probs of the top-k tokens within `bound` (end-of-generation tokens are excluded
 *                 from the choice on both sides: wllama's ignore_eos).
 *
 * Quantized (`dtype` q4 / q8): the engine on onnx/model_q4.onnx or model_quantized.onnx, wllama on
 * gguf/model-q4_0.gguf or model-q8_0.gguf, which hold exactly the same quantized weights
 * (scripts/models/gguf-quant.ts). The two runtimes still round differently: llama.cpp quantizes the
 * activations to Q8_0 blocks (32 values, symmetric int8) for its Q4_0 and Q8_0 dot products, where
 * the engine on wasm rewrites q4's MatMulNBits into int8 products over activations rounded per row
 * (src/engine/graph/int8-projections.ts) and its q8 graph quantizes each activation tensor to uint8 with
 * one scale (DynamicQuantizeLinear). So the bound is wider (QUANT_BOUNDS,
 * measured), and greedy tokens must agree up to the first near-tie (`min_top2_gap` shows how close).
 *
 * CLI:  npx tsx bench/peers/check-wllama.ts [--model NAME]... [--dtype fp32|q4|q8] [--steps 24] [--top 10]
 *                                           [--bound B] [--json FILE] [--no-build] [--verbose]
 * Exit status 1 when any model disagrees.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Browser } from 'playwright-core';
import { type PeersSession, launchChromium, openPeersPage } from './browser.ts';
import { type PeerDtype, type PeerModel, ggufUrl, peerModel } from './models.ts';

export const DEFAULT_BOUND = 1e-3;
/**
 * max |Δ log p| over the top-10 between wllama and the engine on the same quantized weights
 * (measured 2026-11-23 over 12 strings and the greedy steps up to the first divergence:
 * tiny-random-llama q4 0.164, q8 0.308; smollm2-135m-random q4 0.202, q8 0.647), with headroom;
 * q4 measured again 2026-11-25 once the engine computes q4 as int8 products on wasm (weights
 * rounded to int8 per column, activations to 8 bits per row: int8-projections.ts):
 * tiny-random-llama 0.263, greedy parted at step 15 of 24 (top-2 gap 0.088); smollm2-135m-random
 * 0.546 over the top-10 (0.350 over the test strings, 0.145 for the chosen tokens), greedy parted
 * at step 12 (top-2 gap 0.007). Its bound is now q8's kind of headroom over that.
 * Quantized, greedy tokens may part at a near-tie: the check passes when they are identical, or when
 * at the first differing step the engine's top-2 gap is within the bound (a difference the two
 * roundings can make); smollm2-135m-random parted at step 11 (q4, gap 0.052) and step 5 (q8). Quantized, a
 * tokenization row agrees when the token counts agree and the log-probs of the top-k ids both list
 * are within the bound: the two roundings can swap near-tied ids, even the first (the q8 check on
 * tiny-random-llama did on 2 of 12 strings), so the lists need not hold the same ids in the same order.
 */
export const QUANT_BOUNDS: Readonly<Record<PeerDtype, number>> = { fp32: DEFAULT_BOUND, q4: 0.8, q8: 1 };

interface TopEntry {
  id: number;
  logprob: number;
}
interface WllamaLogprob extends TopEntry {
  top_logprobs: TopEntry[];
}
interface WllamaCompletion {
  wall_ms: number;
  res: {
    choices: { text: string; logprobs: { content: WllamaLogprob[] } | null }[];
    usage: { prompt_tokens: number; completion_tokens: number };
  };
}
type EngineStep = { token: number; logprob: number; top: [number, number][] };

export interface TokenizationRow {
  text: string;
  engine_tokens: number;
  wllama_tokens: number;
  /** How many top entries were compared (fewer than k when a partial-UTF-8 piece ranks high; 0: length only). */
  compared_top: number;
  /** max |Δ log p| over the top-k ids both sides list for the next token. */
  max_abs_dlogprob: number;
  same_top_ids: boolean;
  agree: boolean;
}

export interface GreedyResult {
  prompt: string;
  prompt_tokens: { engine: number; wllama: number };
  steps: number;
  /** Top entries compared per step (see TokenizationRow.compared_top). */
  compared_top: number;
  /** Ids never chosen on either side: end-of-generation tokens and partial-UTF-8 pieces. */
  banned: number;
  engine: number[];
  wllama: number[];
  identical: boolean;
  first_mismatch: number | null;
  /** max over steps of |Δ log p| of the chosen token. */
  max_abs_dlogprob_chosen: number;
  /** max over steps and over the top-k ids both list of |Δ log p|. */
  max_abs_dlogprob_top: number;
  /** steps whose top-k ids came in the same order on both sides. */
  same_top_order_steps: number;
  /** smallest gap between the best and second-best log-prob over the steps (how close a tie came). */
  min_top2_gap: number;
  /** The engine's top-2 gap at the first differing step (null when identical). */
  gap_at_mismatch: number | null;
  engine_text: string;
  wllama_text: string;
}

export interface AgreementResult {
  model: string;
  dtype: PeerDtype;
  bound: number;
  threads: number;
  wllama: { libllama: string | null; flash_attn: false; cache_type: 'f32'; eog: number[] };
  tokenization: TokenizationRow[];
  greedy: GreedyResult;
  pass: boolean;
}

export interface CheckOptions {
  /** Engine dtype and GGUF compared; default fp32. */
  dtype?: PeerDtype;
  steps?: number;
  topK?: number;
  bound?: number;
}

function compareTop(engine: [number, number][], wllama: TopEntry[]): { max: number; sameIds: boolean; sameOrder: boolean } {
  const w = new Map(wllama.map((e) => [e.id, e.logprob]));
  let max = 0;
  let shared = 0;
  for (const [id, lp] of engine) {
    const other = w.get(id);
    if (other === undefined) continue;
    shared++;
    max = Math.max(max, Math.abs(lp - other));
  }
  const sameIds = shared === engine.length && engine.length === wllama.length;
  const sameOrder = sameIds && engine.every(([id], i) => wllama[i]?.id === id);
  return { max, sameIds, sameOrder };
}

const topGap = (s: EngineStep | undefined): number | null => (s && s.top.length > 1 ? s.top[0]![1] - s.top[1]![1] : null);

/** Runs the agreement check for one model in an open peers page. */
export async function checkAgreement(s: PeersSession, model: PeerModel, opts: CheckOptions = {}): Promise<AgreementResult> {
  const steps = opts.steps ?? 24;
  const topK = opts.topK ?? 10;
  const dtype = opts.dtype ?? 'fp32';
  const bound = opts.bound ?? QUANT_BOUNDS[dtype];
  const key = `check-${model.name}-${dtype}`;
  const engine = <T>(method: string, ...args: unknown[]) => s.call('engineCall', key, method as never, ...args) as Promise<T>;
  await s.call('engineStart', key);
  try {
    await engine('load', { model: model.name, threads: 1, dtype });
    const loaded = await s.call('wllamaLoad', { url: ggufUrl(model, dtype), threads: 1, nCtx: model.nCtx, flashAttn: false, cacheType: 'f32' });
    const libllama = (await s.call('info')).libllama;
    const completeOnce = (params: Record<string, unknown>) =>
      s.call('wllamaComplete', { temperature: 0, cache_prompt: false, logprobs: topK, ...params } as never) as Promise<WllamaCompletion>;
    // wllama's server fails outright (a garbage reply length) when a piece that is not valid UTF-8
    // on its own lands among the top `logprobs` it writes: the engine's list excludes them (below),
    // but the two runtimes' orders can differ by the rounding bound. Then ask again for one fewer,
    // down to none; the result says how many were compared.
    const complete = async (params: Record<string, unknown>): Promise<WllamaCompletion & { logprobs: number }> => {
      for (let n = (params['logprobs'] as number | undefined) ?? topK; ; n--) {
        try {
          return { ...(await completeOnce({ ...params, logprobs: n })), logprobs: n };
        } catch (e) {
          if (n <= 0 || !/Invalid typed array length/.test(String(e))) throw e;
        }
      }
    };

    // wllama's server throws while writing logprobs that contain a piece which is not valid UTF-8 on
    // its own (a byte of a multi-byte character): ask only for as many top entries as come before
    // the first such id in the engine's list (the orders agree when the check passes).
    const partial = new Set(await engine<number[]>('partialUtf8Ids'));
    const validPrefix = (top: [number, number][]) => {
      const i = top.findIndex(([id]) => partial.has(id));
      return i < 0 ? top.length : i;
    };

    const tokenization: TokenizationRow[] = [];
    for (const text of model.strings) {
      const ids = await engine<number[]>('encode', text, model.addSpecialTokens);
      const [e] = await engine<EngineStep[]>('greedy', ids, 1, [], topK);
      const k = validPrefix(e!.top);
      // k = 0: the most likely next token is a partial character; compare the prompt length only
      const ban = partial.size ? { logit_bias: [...partial].map((id) => [id, false]) } : {};
      const w = await complete(k > 0 ? { prompt: text, max_tokens: 1, logprobs: k, ...ban } : { prompt: text, max_tokens: 1, logprobs: 0, ...ban });
      const top = w.res.choices[0]?.logprobs?.content[0]?.top_logprobs ?? [];
      const asked = w.logprobs;
      const cmp = asked > 0 ? compareTop(e!.top.slice(0, asked), top) : { max: 0, sameIds: true, sameOrder: true };
      tokenization.push({
        text,
        engine_tokens: ids.length,
        wllama_tokens: w.res.usage.prompt_tokens,
        compared_top: asked,
        max_abs_dlogprob: cmp.max,
        same_top_ids: cmp.sameIds,
        agree: ids.length === w.res.usage.prompt_tokens && (dtype === 'fp32' ? cmp.sameIds : true) && cmp.max <= bound,
      });
    }

    const promptIds = await engine<number[]>('encode', model.greedyPrompt, model.addSpecialTokens);
    // partial-character tokens are excluded from the choice on both sides (llama.cpp: logit bias false = -inf)
    const banned = [...new Set([...loaded.eog, ...partial])];
    const e = await engine<EngineStep[]>('greedy', promptIds, steps, banned, topK);
    const k = Math.min(...e.map((x) => validPrefix(x.top)));
    const w = await complete({
      prompt: model.greedyPrompt,
      max_tokens: steps,
      ignore_eos: true,
      logprobs: k,
      ...(partial.size ? { logit_bias: [...partial].map((id) => [id, false]) } : {}),
    });
    const content = w.res.choices[0]?.logprobs?.content ?? [];
    const wIds = content.map((c) => c.id);
    const eIds = e.map((x) => x.token);
    let firstMismatch: number | null = null;
    let maxChosen = 0;
    let maxTop = 0;
    let sameOrder = 0;
    let minGap = Infinity;
    const asked = w.logprobs;
    const haveLogprobs = asked > 0;
    for (let i = 0; i < Math.max(eIds.length, wIds.length); i++) {
      if (haveLogprobs && firstMismatch === null && eIds[i] !== wIds[i]) firstMismatch = i;
      const es = e[i];
      const ws = content[i];
      if (!es || !ws || !haveLogprobs) continue;
      if (es.top.length > 1) minGap = Math.min(minGap, es.top[0]![1] - es.top[1]![1]);
      if (firstMismatch !== null) continue; // after a divergence the contexts differ
      maxChosen = Math.max(maxChosen, Math.abs(es.logprob - ws.logprob));
      const cmp = compareTop(es.top.slice(0, asked), ws.top_logprobs);
      maxTop = Math.max(maxTop, cmp.max);
      if (cmp.sameOrder) sameOrder++;
    }
    const engineText = await engine<string>('decode', eIds);
    const wllamaText = w.res.choices[0]?.text ?? '';
    // without logprobs (k = 0) there are no ids from wllama: compare the texts
    const identical = haveLogprobs ? firstMismatch === null && eIds.length === steps : engineText === wllamaText;
    const greedy: GreedyResult = {
      prompt: model.greedyPrompt,
      prompt_tokens: { engine: promptIds.length, wllama: w.res.usage.prompt_tokens },
      steps,
      compared_top: asked,
      banned: banned.length,
      engine: eIds,
      wllama: wIds,
      identical,
      first_mismatch: haveLogprobs ? firstMismatch : null,
      max_abs_dlogprob_chosen: maxChosen,
      max_abs_dlogprob_top: maxTop,
      same_top_order_steps: sameOrder,
      min_top2_gap: minGap,
      gap_at_mismatch: firstMismatch === null ? null : topGap(e[firstMismatch]),
      engine_text: engineText,
      wllama_text: wllamaText,
    };
    // quantized: the two roundings may part at a near-tie (see QUANT_BOUNDS)
    const greedyOk = greedy.identical || (dtype !== 'fp32' && greedy.gap_at_mismatch !== null && greedy.gap_at_mismatch <= bound);
    const pass =
      tokenization.every((t) => t.agree) &&
      greedyOk &&
      greedy.prompt_tokens.engine === greedy.prompt_tokens.wllama &&
      greedy.max_abs_dlogprob_top <= bound;
    return {
      model: model.name,
      dtype,
      bound,
      threads: 1,
      wllama: { libllama, flash_attn: false, cache_type: 'f32', eog: loaded.eog },
      tokenization,
      greedy,
      pass,
    };
  } finally {
    await s.call('wllamaExit').catch(() => {});
    await s.call('wllamaForget').catch(() => {});
    await s.call('engineStop', key).catch(() => {});
  }
}

/** Opens a page in `browser` and checks each model in turn. */
export async function checkModels(browser: Browser, models: readonly string[], opts: Omit<CheckOptions, 'dtype'> & { dtypes?: readonly PeerDtype[]; build?: boolean; dist?: string; verbose?: boolean } = {}): Promise<AgreementResult[]> {
  const s = await openPeersPage(browser, { ...(opts.build !== undefined ? { build: opts.build } : {}), ...(opts.dist ? { dist: opts.dist } : {}), ...(opts.verbose ? { verbose: true } : {}) });
  try {
    const out: AgreementResult[] = [];
    for (const name of models) {
      const m = peerModel(name);
      for (const dtype of opts.dtypes ?? ['fp32']) if (m.dtypes.includes(dtype)) out.push(await checkAgreement(s, m, { ...opts, dtype }));
    }
    return out;
  } finally {
    await s.close();
  }
}

export function summarize(r: AgreementResult): string {
  const tok = r.tokenization;
  const tokBad = tok.filter((t) => !t.agree);
  const maxTok = Math.max(...tok.map((t) => t.max_abs_dlogprob));
  const g = r.greedy;
  return [
    `${r.pass ? 'PASS' : 'FAIL'} ${r.model} ${r.dtype} (bound ${r.bound})`,
    `  tokenization: ${tok.length - tokBad.length}/${tok.length} strings agree (max |Δlog p| ${maxTok.toExponential(2)})` +
      tokBad.map((t) => `\n    differs: ${JSON.stringify(t.text)} engine ${t.engine_tokens} vs wllama ${t.wllama_tokens} tokens, Δ ${t.max_abs_dlogprob.toExponential(2)}`).join(''),
    `  greedy: prompt ${g.prompt_tokens.engine}/${g.prompt_tokens.wllama} tokens, ${g.steps} steps ${g.identical ? 'identical' : `DIFFER at ${g.first_mismatch} (engine top-2 gap there ${g.gap_at_mismatch?.toFixed(3)})`}, ` +
      `max |Δlog p| chosen ${g.max_abs_dlogprob_chosen.toExponential(2)}, top-k ${g.max_abs_dlogprob_top.toExponential(2)}, ` +
      `same top-k order ${g.same_top_order_steps}/${g.steps}, min top-2 gap ${g.min_top2_gap.toFixed(3)}`,
    `  engine: ${JSON.stringify(g.engine_text)}`,
    `  wllama: ${JSON.stringify(g.wllama_text)}`,
  ].join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      model: { type: 'string', multiple: true },
      dtype: { type: 'string', multiple: true },
      steps: { type: 'string', default: '24' },
      top: { type: 'string', default: '10' },
      bound: { type: 'string' },
      json: { type: 'string' },
      'no-build': { type: 'boolean', default: false },
      verbose: { type: 'boolean', default: false },
    },
  });
  const models = values.model ?? ['tiny-random-llama', 'TinyStories-656K', 'smollm2-135m-random'];
  const browser = await launchChromium();
  try {
    const results = await checkModels(browser, models, {
      dtypes: (values.dtype ?? ['fp32']) as PeerDtype[],
      steps: Number(values.steps),
      topK: Number(values.top),
      ...(values.bound ? { bound: Number(values.bound) } : {}),
      build: !values['no-build'],
      verbose: values.verbose,
    });
    for (const r of results) console.log(summarize(r));
    if (values.json) writeFileSync(values.json, `${JSON.stringify(results, null, 2)}\n`);
    if (!results.every((r) => r.pass)) process.exitCode = 1;
  } finally {
    await browser.close();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) await main();
