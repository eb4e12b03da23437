// The pinned onnxruntime-web patch (build/ort-patch.mjs) at work in the built app: on wasm, in a
// cross-origin-isolated page, every forward pass of the engine keeps its KV cache in wasm memory
// (status().counters.residentPasses counts them), and disposing releases the memory: the live
// tensors come back to the prefix cache's. That the answers are unchanged is checked by every
// wasm spec against fp32 and WebGPU (formats.spec.ts, decision-facade.spec.ts).
import { expect, test } from '@playwright/test';
import { MIRROR } from './support/env.ts';
import { outcomeDiff } from '../test/reliability/workload.ts';

test('wasm: the KV cache stays in wasm memory between passes, and is released when disposed', async ({ page }) => {
  await page.goto(`/?model=tiny-random-llama&host=${encodeURIComponent(MIRROR)}&device=wasm&dtype=fp32`);
  const out = await page.evaluate(async () => {
    const jev = (window as any).jev;
    await jev.ready;
    const decision = { model: 'jev', state: 'The little dog lost his red ball in the park.', questions: { sad: { type: 'noul', instructions: 'Is the dog sad?' }, mood: { type: 'score', instructions: 'How happy?', criteria: ['sad', 'fine', 'happy'] } } };
    const chat = { model: 'jev', messages: [{ role: 'user', content: 'Tell me about the dog.' }], temperature: 0, max_tokens: 12, logprobs: true, top_logprobs: 2 };
    const s0 = await jev.status();
    await jev.cache.clear();
    const d = await jev.decisions.create(decision);
    const c = await jev.chat.completions.create(chat);
    const s1 = await jev.status();
    return { isolated: crossOriginIsolated, s0: s0.counters, s1: s1.counters, cached: s1.prefixCache.entries, d: d.answers, c: { text: c.choices[0].message.content, logprobs: c.choices[0].logprobs } };
  });
  expect(out.isolated).toBe(true);
  const passes = out.s1.forwardPasses - out.s0.forwardPasses;
  expect(passes).toBeGreaterThan(10);
  expect(out.s1.residentPasses - out.s0.residentPasses).toBe(passes);
  expect(out.s1.liveTensors).toBe(out.cached * 4);

  // The same requests again, from cold: bit for bit the same (inputs by pointer, outputs in place).
  const again = await page.evaluate(async () => {
    const jev = (window as any).jev;
    const decision = { model: 'jev', state: 'The little dog lost his red ball in the park.', questions: { sad: { type: 'noul', instructions: 'Is the dog sad?' }, mood: { type: 'score', instructions: 'How happy?', criteria: ['sad', 'fine', 'happy'] } } };
    await jev.cache.clear();
    return (await jev.decisions.create(decision)).answers;
  });
  expect(again).toEqual(out.d);
});
