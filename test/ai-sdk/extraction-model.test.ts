/**
 * `jevLocal(client).extractionModel()` under the unmodified `experimental_extract` (its own
 * validation checks every answer's type and source against the state), over a client in this
 * process and over a remote client through the HTTP route `POST /v1/extractions`; the route's
 * refusals of bad bodies, naming the field; cancel mid-extraction; and the prefix cache shared by
 * an extraction and a decision on the same document.
 */
import { experimental_extract } from 'ai';
import { beforeAll, describe, expect, it } from 'vitest';
import { jevLocal } from '../../src/ai-sdk/index.ts';
import type { ExtractionResponse } from '../../src/contract/index.ts';
import type { Engine } from '../../src/engine/engine.ts';
import type { JevClient } from '../../src/facade/jev-client.ts';
import { createRemoteClient } from '../../src/facade/remote-client.ts';
import { localClient } from '../support/local-client.ts';
import { GENERATED, TINY } from '../support/models.ts';

const STATE = [
  { type: 'text' as const, text: 'Invoice INV-88 from Acme Tools Ltd, total 1,250.75 USD, due 2025-01-31. Delivery took 3 days.' },
  { type: 'text' as const, text: 'Contact: Dana Reyes, call at 09:15.' },
];
const FIELDS = {
  vendor: { type: 'text', instructions: 'The company that sent the invoice.' },
  total: { type: 'number', unit: 'USD', decimals: 2 },
  due: { type: 'date' },
  call: { type: 'time' },
  when: { type: 'datetime' },
  delivery: { type: 'duration', unit: 'days', integer: true },
  people: { type: 'list', items: 'text' },
} as const;

async function post(client: JevClient, body: unknown): Promise<{ status: number; json: any }> {
  const res = await client.fetch('/v1/extractions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: await res.json() };
}

describe(`extractions on ${TINY}`, () => {
  let client: JevClient;
  let engine: Engine;
  let direct: ExtractionResponse;
  beforeAll(async () => {
    ({ client, engine } = await localClient(GENERATED, TINY));
    direct = await client.extractions.create({ model: 'jev', state: STATE, fields: FIELDS, referenceDate: '2025-01-15' });
  }, 120_000);

  it('experimental_extract passes the AI SDK validation and equals client.extractions.create', async () => {
    const model = jevLocal(client).extractionModel('jev');
    const result = await experimental_extract({ model, state: STATE, fields: FIELDS, referenceDate: '2025-01-15', maxRetries: 0 });
    expect(result.answers).toEqual(direct.answers);
    expect(result.usage.inputTokens).toBe(direct.usage.input_tokens);
    expect(result.usage.outputTokens).toBe(direct.usage.output_tokens);
    expect(Object.keys(result.answers).sort()).toEqual(Object.keys(FIELDS).sort());
    for (const answer of Object.values(result.answers)) expect(answer.type).not.toBe('refusal');
  });

  it('through a remote client (createClient({ baseURL })) and the HTTP route: the same answers', async () => {
    const remote = createRemoteClient({ baseURL: 'https://jev.example', fetch: client.fetch });
    const model = jevLocal(remote).extractionModel('jev');
    const result = await experimental_extract({ model, state: STATE, fields: FIELDS, referenceDate: '2025-01-15', maxRetries: 0 });
    expect(result.answers).toEqual(direct.answers);
    const { status, json } = await post(client, { model: 'jev', state: STATE, fields: FIELDS, referenceDate: '2025-01-15' });
    expect(status).toBe(200);
    expect(json.answers).toEqual(direct.answers);
  });

  it('refuses bad bodies with 400 naming the field', async () => {
    const base = { model: 'jev', state: 'x y z', fields: { a: { type: 'number' } } };
    const cases: [unknown, string][] = [
      [{ ...base, fields: { a: { type: 'email' } } }, 'fields.a.type'],
      [{ ...base, fields: { a: { type: 'number', decimals: 7 } } }, 'fields.a.decimals'],
      [{ ...base, referenceDate: '2025-02-30' }, 'referenceDate'],
      [{ ...base, fields: {} }, 'fields'],
    ];
    for (const [body, param] of cases) {
      const { status, json } = await post(client, body);
      expect(status, param).toBe(400);
      expect(json.error.param).toBe(param);
      expect(json.error.message).toContain(param);
    }
  });

  it('a cancelled extraction rejects with AbortError and frees the engine (no tensor left, the next one answers)', async () => {
    const lm = engine.languageModel!;
    await client.cache.clear();
    const before = lm.ledger.live;
    const controller = new AbortController();
    const fedBefore = lm.forwardCalls;
    const pending = client.extractions.create({ model: 'jev', state: STATE, fields: FIELDS }, { signal: controller.signal });
    // Abort once the engine has started its passes.
    while (lm.forwardCalls < fedBefore + 3) await new Promise((r) => setTimeout(r, 1));
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    await client.cache.clear();
    expect(lm.ledger.live).toBe(before);
    const again = await client.extractions.create({ model: 'jev', state: STATE, fields: FIELDS, referenceDate: '2025-01-15' });
    expect(again.answers).toEqual(direct.answers);
  });

  it('the prefix cache serves the state to a decision after an extraction on the same document, and back', async () => {
    const text = 'Order 5521 shipped on 2024-06-02 to Lisbon; the customer paid 80.00 EUR and asks for a refund.';
    await client.cache.clear();
    const first = await client.extractions.create({ model: 'jev', state: text, fields: { paid: { type: 'number', decimals: 2 } } });
    expect(first.usage.input_tokens_details!.cached_tokens).toBe(0);
    const written = first.usage.input_tokens_details!.cache_write_tokens;
    expect(written).toBeGreaterThan(0);
    const decision = await client.decisions.create({
      model: 'jev',
      state: text,
      questions: { refund: { type: 'noul', instructions: 'Does the customer ask for a refund?' }, city: { type: 'choice', criteria: { Lisbon: null, Porto: null } } },
      include: ['usage_details'],
    });
    expect(decision.usage.input_tokens_details!.cached_tokens).toBe(written);
    const again = await client.extractions.create({ model: 'jev', state: [{ type: 'text', text }], fields: { date: { type: 'date' } } });
    expect(again.usage.input_tokens_details!.cached_tokens).toBe(written);
  });
});
