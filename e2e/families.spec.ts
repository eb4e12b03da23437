/**
 * Every generated model family (scripts/models/families.ts: random weights, the family's real
 * tokenizer, chat template, config and stop tokens) end to end in Chromium on wasm: a decision
 * through the facade and the same through the service worker's HTTP surface, a streamed chat
 * completion through the HTTP surface, and a second turn that reuses the first turn's KV cache.
 */
import { expect, test, type Page } from './support/warm-context.ts';
import { CLIENT_BUNDLE } from './support/client-bundle.ts';
import { MIRROR } from './support/env.ts';
import { TICKET_DECISION } from './support/ticket-decision.ts';

const FAMILIES = ['tiny-random-qwen2', 'tiny-random-qwen3', 'tiny-random-llama3', 'tiny-random-phi3', 'tiny-random-gemma3'] as const;

async function open(page: Page, model: string) {
  await page.goto(`/?model=${model}&host=${encodeURIComponent(MIRROR)}&device=wasm&dtype=fp32`);
  const status = await page.evaluate(() => (window as any).jev.ready);
  expect(status).toMatchObject({ state: 'ready', model, device: 'wasm' });
  await page.waitForFunction(() => !!navigator.serviceWorker.controller);
  await page.addScriptTag({ path: CLIENT_BUNDLE });
}

for (const model of FAMILIES) {
  test(`${model}: decisions through the facade and HTTP, a streamed chat, and a second turn on the cached prefix`, async ({ page }) => {
    await open(page, model);
    const out = await page.evaluate(async (body) => {
      const jev = (window as any).jev;
      const facade = await jev.decisions.create(body);
      const http = await fetch('/inference/jev/api/alpha/decisions', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: await r.json() }));

      const openai = new (globalThis as any).OpenAI({ apiKey: 'local', baseURL: location.origin + '/v1', dangerouslyAllowBrowser: true });
      const messages: { role: string; content: string }[] = [
        { role: 'system', content: 'You answer in one short sentence.' },
        { role: 'user', content: 'Say something about the sea.' },
      ];
      const request = { model: 'jev', temperature: 0, max_tokens: 12, reasoning_effort: 'none' };
      let first = '';
      let chunks = 0;
      let finish: string | null = null;
      for await (const c of await openai.chat.completions.create({ ...request, messages, stream: true })) {
        first += c.choices[0]?.delta?.content ?? '';
        finish = c.choices[0]?.finish_reason ?? finish;
        chunks++;
      }
      // The same turn not streamed: greedy, so the same text; its usage gives the first prompt's length.
      const firstAgain = await openai.chat.completions.create({ ...request, messages });
      const turn2 = [...messages, { role: 'assistant', content: firstAgain.choices[0].message.content }, { role: 'user', content: 'And about the sky?' }];
      const fedBefore = (await jev.status()).counters.tokensFed;
      const second = await openai.chat.completions.create({ ...request, messages: turn2, max_tokens: 4 });
      const fedWarm = (await jev.status()).counters.tokensFed - fedBefore;
      return { facade, http, first, chunks, finish, firstAgain, second, fedWarm };
    }, TICKET_DECISION);

    expect(out.http.status).toBe(200);
    expect(out.http.body.answers).toEqual(out.facade.answers);
    expect(Object.keys(out.facade.answers).sort()).toEqual(['anger', 'refund', 'team']);
    const team = out.facade.answers.team;
    expect(Object.keys(team.probabilities).sort()).toEqual(['account', 'billing', 'technical']);
    expect(Math.abs(Object.values<number>(team.probabilities).reduce((a, b) => a + b, 0) - 1)).toBeLessThan(1e-6);

    expect(out.chunks).toBeGreaterThan(1);
    expect(['stop', 'length']).toContain(out.finish);
    expect(out.firstAgain.choices[0].message.content).toBe(out.first);
    expect(out.second.choices[0].message.role).toBe('assistant');
    // KV reuse: the second turn's prompt (P2 tokens) and its decode steps (at most C2 fed) minus
    // what was fed is what came from the cache: at least most of the first turn's prompt (P1;
    // a template may render the first turn's end differently once it is history).
    const p1 = out.firstAgain.usage.prompt_tokens;
    const p2 = out.second.usage.prompt_tokens;
    const c2 = out.second.usage.completion_tokens;
    const reused = p2 + c2 - out.fedWarm;
    expect(p2).toBeGreaterThan(p1);
    expect(reused).toBeGreaterThanOrEqual(p1 - 8);
    expect(out.fedWarm).toBeLessThan(p2);
  });
}
