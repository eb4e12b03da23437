/**
 * OpenAI's Decisions shape through `npm run serve` (src/server/ in front of a loopback SGLang or vLLM):
 * the unmodified `openai` client's `decisions.create` against the server's `/v1/decisions`, and a remote
 * client's `createOpenAI` (which calls the server's Jev path), equal the server's Jev answers for the same
 * request written by hand (test/support/openai-decision-fixture.ts), bit for bit: one engine path.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAIDecisionSchema, type DecisionResponse, type OpenAIDecision } from '../../src/contract/index.ts';
import { createRemoteClient } from '../../src/facade/remote-client.ts';
import { TINY } from '../support/models.ts';
import { expected, JEV, REQUEST } from '../support/openai-decision-fixture.ts';
import { post, served, type Served } from './support/served.ts';

for (const kind of ['sglang', 'vllm'] as const) {
  describe(`/v1/decisions through the server in front of ${kind}`, () => {
    let s: Served;
    beforeAll(async () => {
      s = await served(kind, TINY);
    });
    afterAll(async () => s?.close());

    it("the openai client and a remote client's createOpenAI equal the server's Jev answers", async () => {
      const jev = (await (await post(s.server, '/inference/jev/api/alpha/decisions', JEV)).json()) as DecisionResponse;
      const openai = new OpenAI({ baseURL: `${s.server.url}/v1`, apiKey: 'local', maxRetries: 0 });
      const viaOpenAI = (await openai.decisions.create(REQUEST as never)) as unknown as OpenAIDecision;
      expect(openAIDecisionSchema.parse(viaOpenAI)).toEqual(viaOpenAI);
      expect(viaOpenAI.answers).toEqual(expected(jev));
      expect(viaOpenAI.usage.input_tokens).toBe(jev.usage.input_tokens);
      const remote = await createRemoteClient({ baseURL: s.server.url }).decisions.createOpenAI(REQUEST);
      expect(remote.answers).toEqual(expected(jev));
      const bad = await post(s.server, '/v1/decisions', { ...REQUEST, questions: [{ type: 'choice', instructions: 'x', choices: [{ value: true }, { value: true }] }] });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: { param: string } }).error.param).toBe('questions[0].choices[1].value');
    });
  });
}
