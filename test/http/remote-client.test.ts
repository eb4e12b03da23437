import { beforeAll, describe, expect, it } from 'vitest';
import { parseDecisionRequest, questionFingerprint, type CalibrationProfile, type ChatCompletionChunk } from '../../src/contract/index.ts';
import { createRemoteClient } from '../../src/facade/remote-client.ts';
import type { JevClient } from '../../src/facade/jev-client.ts';
import { localClient } from '../support/local-client.ts';
import { GENERATED, TINY } from '../support/models.ts';

const DECISION = {
  model: 'jev',
  state: 'The parcel arrived broken.',
  questions: { refund: { type: 'noul', instructions: 'Refund?' }, team: { type: 'choice', instructions: 'Team?', criteria: { billing: null, shipping: null } } },
};
const CHAT = { model: 'jev', messages: [{ role: 'user', content: 'Hello.' }], temperature: 0, max_tokens: 10 };

describe('a client pointed at a remote server that speaks the same HTTP specification', () => {
  let server: JevClient;
  let remote: JevClient;
  beforeAll(async () => {
    ({ client: server } = await localClient(GENERATED, TINY, { apiKey: 'k' }));
    // The "server" is the HTTP surface of another engine; the remote client reaches it only through fetch.
    remote = createRemoteClient({ baseURL: 'https://jev.example/', apiKey: 'k', fetch: server.fetch });
  });

  it('gives the same decisions, completions and streamed chunks as the local engine', async () => {
    const [a, b] = [await server.decisions.create(DECISION), await remote.decisions.create(DECISION)];
    expect(b.answers).toEqual(a.answers);
    const plain = await remote.chat.completions.create(CHAT);
    const stream = (await remote.chat.completions.create({ ...CHAT, stream: true })) as AsyncIterable<ChatCompletionChunk>;
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    expect('choices' in plain && plain.choices[0]!.message.content).toBe(text);
    expect((await remote.models.list()).data[0]!.id).toBe('jev');
  });

  it('sends a profile saved in the remote client inline: the server, which knows no such id, answers as with the profile itself', async () => {
    const base = await server.decisions.create(DECISION);
    const questions = parseDecisionRequest(DECISION).questions;
    const profile: CalibrationProfile = {
      object: 'calibration_profile',
      id: 'remote-profile',
      model: base.model,
      calibrate: false,
      created: '2026-11-23T00:00:00.000Z',
      questions: {
        [questionFingerprint(questions['refund']!)]: {
          key: 'refund', type: 'noul', answers: ['true', 'false'], fit: { method: 'platt', a: 2, b: 0.5 },
          conformal: { scores: [0.1, 0.2, 0.3] }, fit_items: 10, holdout: null,
        },
        [questionFingerprint(questions['team']!)]: {
          key: 'team', type: 'choice', answers: ['billing', 'shipping'], fit: { method: 'temperature', temperature: 3 },
          conformal: { scores: [0.1, 0.2, 0.3] }, fit_items: 10, holdout: null,
        },
      },
    };
    remote.calibration.save(profile);
    expect(server.calibration.get(profile.id)).toBeNull();
    const body = { ...DECISION, prediction_set: { alpha: 0.5 } };
    const [a, b] = [await server.decisions.create({ ...body, calibration: profile }), await remote.decisions.create({ ...body, calibration: profile.id })];
    expect(b.answers).toEqual(a.answers);
    const refund = b.answers['refund']!;
    if (refund.type !== 'noul' || base.answers['refund']!.type !== 'noul') throw new Error('noul expected');
    expect(refund.noul).not.toBe(base.answers['refund']!.noul);
    const unknown = await remote.decisions.create({ ...body, calibration: 'not-saved' }).catch((e) => e);
    expect(unknown).toMatchObject({ status: 400, code: 'invalid_request', param: 'calibration' });
  });

  it('rejects like the local client: status, code and param from the error body', async () => {
    const err = await remote.decisions.create({ ...DECISION, model: 'other' }).catch((e) => e);
    expect(err.status).toBe(404);
    expect(err.error).toMatchObject({ code: 'model_not_found', param: 'model' });
    const noKey = createRemoteClient({ baseURL: 'https://jev.example', fetch: server.fetch });
    const unauthorized = await noKey.decisions.create(DECISION).catch((e) => e);
    expect(unauthorized.status).toBe(401);
  });

  it("cannot clear its server's prefix cache: cache.clear() rejects, saying so; the local client's clears", async () => {
    const err = await remote.cache.clear().catch((e) => e);
    expect(err).toMatchObject({ code: 'unprocessable' });
    expect(String(err.message)).toMatch(/remote client cannot clear its server's prefix cache/);
    expect((await remote.status()).prefixCache).toMatchObject({ entries: 0, maxBytes: 0 });
  });
});
