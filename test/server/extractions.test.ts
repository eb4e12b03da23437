/**
 * `POST /v1/extractions` through `npm run serve` in front of a loopback SGLang or vLLM: a good
 * body is 501 `not_implemented`, naming the backend and what it lacks (the whole next-token
 * distribution per step, a per-request token mask); a bad body is still the 400 naming its field.
 * (The in-process engine serves extractions: test/ai-sdk/extraction-model.test.ts over client.fetch.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TINY } from '../support/models.ts';
import { post, served, type Served } from './support/served.ts';

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
