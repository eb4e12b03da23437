// The prefix cache in the playground's engine, through `window.jev` and the page's HTTP surface:
// a state asked again feeds only the new questions and answers as from cold (within 1e-6), a new
// conversation reuses a shared system prompt, status() counts it, jev.cache.clear() empties it.
// On WebGPU the cache's tensors stay on the GPU, where they cannot be cut: a whole cached prompt is
// still reused.
import { expect, test } from './support/warm-context.ts';
import { MIRROR } from './support/env.ts';
import { outcomeDiff } from '../test/reliability/workload.ts';

const STATE = 'Ticket 4412: my invoice for March was charged twice, once on the 3rd and again on the 5th. I want the second charge refunded.';
const A = {
  refund: { type: 'noul', instructions: 'Does the customer ask for a refund?' },
  topic: { type: 'choice', instructions: 'What is the ticket about?', criteria: { billing: 'Invoices', bug: 'Something broken', other: null } },
};
const B = {
  angry: { type: 'noul', instructions: 'Is the customer angry?' },
  urgency: { type: 'score', instructions: 'How urgent is it?', criteria: ['not urgent', 'somewhat', 'very urgent'] },
};
const SYSTEM = 'You are a careful support assistant for a billing team. '.repeat(8);

for (const device of ['wasm', 'webgpu'] as const) {
  test(`${device}: the same state asked again is read from the prefix cache, with the answers of a cold request; clear() empties it`, async ({ page }) => {
    await page.goto(`/?model=tiny-random-llama&host=${encodeURIComponent(MIRROR)}&device=${device}&dtype=fp32`);
    const out = await page.evaluate(
      async ({ STATE, A, B, SYSTEM }) => {
        const jev = (window as any).jev;
        const status = await jev.ready;
        const counters = async () => {
          const s = await jev.status();
          return { fed: s.counters.tokensFed, live: s.counters.liveTensors, ...s.prefixCache };
        };
        const decide = (questions: unknown) => jev.decisions.create({ model: 'jev', state: STATE, questions });
        await jev.cache.clear();
        const empty = await counters();
        await decide(A);
        const afterA = await counters();
        const warm = await decide(B);
        const afterB = await counters();
        // The same request over the page's HTTP surface finds the same cache.
        const http = await (
          await fetch('/inference/jev/api/alpha/decisions', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ model: 'jev', state: STATE, questions: B }) })
        ).json();
        const afterHttp = await counters();
        await jev.cache.clear();
        const cleared = await counters();
        const cold = await decide(B);
        const afterCold = await counters();
        // Two conversations sharing a system prompt.
        await jev.cache.clear();
        const chat = (user: string) =>
          jev.chat.completions.create({ model: 'jev', temperature: 0, max_tokens: 3, messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: user }] });
        const one = await chat('My invoice was charged twice.');
        const two = await chat('How do I change my plan?');
        return { device: status.device, empty, afterA, afterB, afterHttp, cleared, afterCold, warm: warm.answers, http: http.answers, cold: cold.answers, chatCached: [one.usage.prompt_tokens_details.cached_tokens, two.usage.prompt_tokens_details.cached_tokens], chatPrompt: two.usage.prompt_tokens };
      },
      { STATE, A, B, SYSTEM },
    );
    expect(out.device).toBe(device);
    expect(out.empty).toMatchObject({ entries: 0, bytes: 0, live: 0 });
    expect(out.afterA.entries).toBeGreaterThan(0);
    expect(out.afterA.live).toBe(out.afterA.entries * 4); // tiny-random-llama: 2 layers × key and value
    // B on the cached state: its state is not fed again, and counted as reused.
    const warmFed = out.afterB.fed - out.afterA.fed;
    const coldFed = out.afterCold.fed - out.cleared.fed;
    const reused = out.afterB.cachedTokens - out.afterA.cachedTokens;
    expect(reused).toBeGreaterThan(20);
    expect(coldFed - warmFed).toBe(reused);
    expect(out.afterB.hits - out.afterA.hits).toBe(1);
    expect(out.afterHttp.cachedTokens - out.afterB.cachedTokens).toBeGreaterThan(20);
    expect(outcomeDiff(out.warm, out.cold)).toEqual([]);
    expect(outcomeDiff(out.http, out.cold)).toEqual([]);
    expect(out.cleared).toMatchObject({ entries: 0, tokens: 0, bytes: 0, live: 0 });
    expect(out.cleared.maxBytes).toBeGreaterThan(0);
    // The second conversation reuses the system prompt (on WebGPU only where a whole cached prompt is its prefix).
    expect(out.chatCached[0]).toBe(0);
    if (device === 'wasm') expect(out.chatCached[1]).toBeGreaterThan(40);
    expect(out.chatCached[1]).toBeLessThan(out.chatPrompt);
  });
}
