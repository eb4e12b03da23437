/**
 * The README's promise: `createClient({ baseURL })` (and `createRemoteClient`) pointed at the
 * server gives the answers the local engine gives, on the same weights.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatCompletion, ChatCompletionChunk, DecisionResponse } from '../../src/contract/index.ts';
import { createClient } from '../../src/client/create-client.ts';
import { createRemoteClient } from '../../src/facade/remote-client.ts';
import type { JevClient } from '../../src/facade/jev-client.ts';
import { localClient } from '../support/local-client.ts';
import { GENERATED, TINY } from '../support/models.ts';
import { served, type Served } from './support/served.ts';

const DECISION = {
  model: 'jev',
  state: { ticket: 'Charged twice', body: 'Please refund the duplicate.' },
  questions: {
    refund: { type: 'noul', instructions: 'Refund?' },
    team: { type: 'choice', instructions: 'Team?', criteria: { billing: 'Charges', shipping: 'Parcels', 'customer support': null } },
    mood: { type: 'score', instructions: 'Mood?', criteria: ['calm', 'annoyed', 'furious'] },
  },
};
const CHAT = { model: 'jev', messages: [{ role: 'user', content: 'Hello.' }], temperature: 0, max_tokens: 8 };

function close(a: DecisionResponse, b: DecisionResponse): void {
  for (const [key, x] of Object.entries(a.answers)) {
    const y = b.answers[key]!;
    const px = x.type === 'noul' ? { noul: x.noul } : x.probabilities;
    const py = y.type === 'noul' ? { noul: y.noul } : (y as { probabilities: Record<string, number> }).probabilities;
    for (const [k, p] of Object.entries(px)) expect(Math.abs((py as Record<string, number>)[k]! - p)).toBeLessThan(1e-4);
    if (x.type === 'choice') expect((y as { choice: string }).choice).toBe(x.choice);
  }
  expect(b.usage).toEqual(a.usage);
}

describe('a client pointed at the server gives the local engine\'s answers', () => {
  let s: Served;
  let local: JevClient;
  beforeAll(async () => {
    s = await served('sglang', TINY, { apiKey: 'secret' });
    ({ client: local } = await localClient(GENERATED, TINY));
  });
  afterAll(async () => s?.close());

  it('createClient({ baseURL }) and createRemoteClient: the same decisions, completion and stream', async () => {
    const expected = await local.decisions.create(DECISION);
    for (const remote of [createClient({ baseURL: s.server.url, apiKey: 'secret' }), createRemoteClient({ baseURL: `${s.server.url}/`, apiKey: 'secret' })]) {
      close(expected, await remote.decisions.create(DECISION));
      const whole = (await remote.chat.completions.create(CHAT)) as ChatCompletion;
      const reference = (await local.chat.completions.create(CHAT)) as ChatCompletion;
      expect(whole.choices[0]!.message.content).toBe(reference.choices[0]!.message.content);
      let text = '';
      const seen: unknown[] = [];
      for await (const c of (await remote.chat.completions.create({ ...CHAT, stream: true })) as AsyncIterable<ChatCompletionChunk>) {
        seen.push(c);
        text += c.choices[0]?.delta.content ?? '';
      }
      expect(text, JSON.stringify(seen)).toBe(reference.choices[0]!.message.content);
      expect((await remote.models.list()).data.map((m) => m.id)).toEqual(['jev', TINY]);
    }
  });

  it("rejects as the local client does: an Error with the server's status and error body", async () => {
    const remote = createRemoteClient({ baseURL: s.server.url, apiKey: 'secret' });
    const bad = { ...DECISION, questions: {} };
    const [mine, theirs] = await Promise.all([remote.decisions.create(bad).catch((e) => e), local.decisions.create(bad).catch((e) => e)]);
    expect(mine.status).toBe(400);
    expect(mine.error).toEqual(theirs.error);
    const unauthorized = await createRemoteClient({ baseURL: s.server.url }).decisions.create(DECISION).catch((e) => e);
    expect(unauthorized.status).toBe(401);
  });
});
