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

test('wasm: an extraction whose rows are dropped and joined in wasm memory gives each field the answer it gets alone, and releases every tensor', async ({ page }) => {
  await page.goto(`/?model=tiny-random-llama&host=${encodeURIComponent(MIRROR)}&device=wasm&dtype=fp32`);
  const out = await page.evaluate(async () => {
    const jev = (window as any).jev;
    await jev.ready;
    const kinds = [{ type: 'text' }, { type: 'number', decimals: 2 }, { type: 'date' }, { type: 'time' }, { type: 'text', instructions: 'Any note?' }];
    // More fields than a batch holds (8): rows finish at different steps, and the later fields join them.
    const fields = Object.fromEntries(Array.from({ length: 14 }, (_, i) => [`f${i}`, { ...kinds[i % kinds.length], instructions: `Field ${i}.` }]));
    const body = { model: 'jev', state: [{ type: 'text', text: 'Invoice INV-7 from Acme Ltd, total 1,234.50 EUR, due 2024-02-29, call at 14:30.' }], fields };
    await jev.extractions.create({ ...body, fields: { f0: fields.f0, f1: fields.f1 } }); // the rows' probe, once per model (its passes are not counted)
    await jev.cache.clear();
    const s0 = await jev.status();
    const together = await jev.extractions.create(body);
    const s1 = await jev.status();
    const alone: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(fields)) alone[key] = (await jev.extractions.create({ ...body, fields: { [key]: field } })).answers[key];
    const s2 = await jev.status();
    return { s0: s0.counters, s1: s1.counters, s2: s2.counters, cached: s2.prefixCache.entries, together: together.answers, alone };
  });
  const passes = out.s1.forwardPasses - out.s0.forwardPasses;
  expect(out.s1.residentPasses - out.s0.residentPasses).toBe(passes);
  expect(out.s2.liveTensors).toBe(out.cached * 4);
  for (const [key, a] of Object.entries(out.alone) as [string, any][]) {
    const b = out.together[key];
    expect(b.type, key).toBe(a.type);
    if (a.type === 'refusal') continue;
    expect(b.guess, key).toEqual(a.guess);
    expect(b.source ?? null, key).toEqual(a.source ?? null);
    expect(Math.abs(b.pNull - a.pNull), key).toBeLessThan(1e-5);
    expect(Math.abs(b.confidence - a.confidence), key).toBeLessThan(1e-5);
  }
});
