/**
 * `POST /v1/extractions` through `npm run serve` in front of a loopback SGLang or vLLM: a good
 * body is 501 `not_implemented`, naming the backend and what it lacks (the whole next-token
 * distribution per step, a per-request token mask); a bad body is still the 400 naming its field.
 * With no --backend (the engine in-process, on its own thread), the server answers them as the
 * page's engine does, answer for answer: the same values and sources, and `pNull` and
 * `confidence` within 1e-6 (its sessions write the fields' rows in place, passes that also read the
 * rows' masked room: the same numbers up to the rounding of a longer sum).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExtractionResponse } from '../../src/contract/index.ts';
import type { JevClient } from '../../src/facade/jev-client.ts';
import { startServer, type RunningServer } from '../../src/server/serve.ts';
import { localClient } from '../support/local-client.ts';
import { GENERATED, TINY } from '../support/models.ts';
import { embeddedOptions, post, served, type Served } from './support/served.ts';

const BODY = { model: 'jev', state: 'Invoice 12, total 40.00 EUR.', fields: { total: { type: 'number', decimals: 2 } } };

for (const kind of ['sglang', 'vllm'] as const) {
  describe(`/v1/extractions through the server in front of ${kind}`, () => {
    let s: Served;
    beforeAll(async () => {
      s = await served(kind, TINY);
    });
    afterAll(async () => s?.close());

    it('answers 501 not_implemented naming the backend and what is missing; a bad body is still 400', async () => {
      const res = await post(s.server, '/v1/extractions', BODY);
      expect(res.status).toBe(501);
      const { error } = (await res.json()) as { error: { code: string; message: string; type: string } };
      expect(error.code).toBe('not_implemented');
      expect(error.type).toBe('server_error');
      expect(error.message).toContain(kind);
      expect(error.message).toContain('token mask');
      expect(error.message).toContain('next-token distribution');
      const bad = await post(s.server, '/v1/extractions', { ...BODY, fields: { total: { type: 'number', decimals: 9 } } });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: { param: string } }).error.param).toBe('fields.total.decimals');
    });
  });
}

describe(`/v1/extractions through the embedded server on ${TINY}`, () => {
  let server: RunningServer;
  let page: JevClient;
  beforeAll(async () => {
    server = await startServer(embeddedOptions(TINY, { host: GENERATED }));
    ({ client: page } = await localClient(GENERATED, TINY));
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    page?.terminate();
  });

  it('answers as the Node engine path does', async () => {
    const body = { ...BODY, fields: { ...BODY.fields, who: { type: 'text' }, when: { type: 'date' } }, referenceDate: '2025-03-01' };
    const res = await post(server, '/v1/extractions', body);
    expect(res.status, await res.clone().text()).toBe(200);
    const served = (await res.json()) as ExtractionResponse;
    const reference = await page.extractions.create(body);
    expect(Object.keys(served.answers)).toEqual(Object.keys(reference.answers));
    for (const [key, want] of Object.entries(reference.answers)) {
      const got = served.answers[key]!;
      const near = (a: unknown, b: unknown) => typeof a === 'number' && typeof b === 'number' && Math.abs(a - b) < 1e-6;
      expect({ ...got, pNull: null, confidence: null }, key).toEqual({ ...want, pNull: null, confidence: null });
      if (want.type === 'refusal' || got.type === 'refusal') continue;
      expect(near(got.pNull, want.pNull), `${key} pNull ${got.pNull} against ${want.pNull}`).toBe(true);
      expect(near(got.confidence, want.confidence), `${key} confidence ${got.confidence} against ${want.confidence}`).toBe(true);
    }
  }, 120_000);
});
