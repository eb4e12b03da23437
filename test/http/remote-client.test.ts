import { beforeAll, describe, expect, it } from 'vitest';
import type { ChatCompletionChunk } from '../../src/contract/index.ts';
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

  it('rejects like the local client: status, code and param from the error body', async () => {
    const err = await remote.decisions.create({ ...DECISION, model: 'other' }).catch((e) => e);
    expect(err.status).toBe(404);
    expect(err.error).toMatchObject({ code: 'model_not_found', param: 'model' });
    const noKey = createRemoteClient({ baseURL: 'https://jev.example', fetch: server.fetch });
    const unauthorized = await noKey.decisions.create(DECISION).catch((e) => e);
    expect(unauthorized.status).toBe(401);
  });
});
