/**
 * Chat through the server: relayed to the loopback engine's /v1/chat/completions behind our
 * validation, whole or streamed chunk by chunk, with usage, our id prefix and model; response_format,
 * tools and tool_choice passed through as sent; a client that goes away mid-stream aborts the
 * engine's request; a request the engine refuses (400) is the caller's 400 with the engine's words.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatCompletion, ChatCompletionChunk } from '../../src/contract/index.ts';
import { TINY } from '../support/models.ts';
import { call, post, served, type Served } from './support/served.ts';

const PATH = '/v1/chat/completions';
const CHAT = { model: 'jev', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Tell me a story.' }], temperature: 0, max_tokens: 12 };

async function sse(res: Response): Promise<unknown[]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => e.slice(6))
    .filter((d) => d !== '[DONE]')
    .map((d) => JSON.parse(d));
}

for (const kind of ['sglang', 'vllm'] as const) {
  describe(`chat through the server on ${kind}`, () => {
    let s: Served;
    beforeAll(async () => {
      s = await served(kind, TINY);
    });
    afterAll(async () => s?.close());

    it("answers a completion as the engine behind it, with our id prefix, model and the engine's usage", async () => {
      const reference = await s.model.engine.chat({ ...CHAT, model: TINY }, call());
      const res = await post(s.server, PATH, CHAT);
      expect(res.status).toBe(200);
      const reply = (await res.json()) as ChatCompletion;
      expect(reply.choices[0]!.message.content).toBe(reference.choices[0]!.message.content);
      expect(reply.choices[0]!.finish_reason).toBe(reference.choices[0]!.finish_reason);
      expect(reply.usage.prompt_tokens).toBe(reference.usage.prompt_tokens);
      expect(reply.usage.completion_tokens).toBe(reference.usage.completion_tokens);
      expect(reply.id).toMatch(/^chatcmpl-/);
      expect(reply.model).toBe(`${kind}/jev-${TINY}-20261122`);
      const sent = s.loopback.log.at(-1)!.body;
      expect(sent).toMatchObject({ model: TINY, temperature: 0, max_tokens: 12, stream: false });
    });

    it('relays a stream chunk by chunk; usage comes last where the client asks for it, and only then', async () => {
      const reference = await s.model.engine.chat({ ...CHAT, model: TINY }, call());
      const chunks = (await sse(await post(s.server, PATH, { ...CHAT, stream: true, stream_options: { include_usage: true } }))) as ChatCompletionChunk[];
      expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
      expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(reference.choices[0]!.message.content);
      const last = chunks.at(-1)!;
      expect(last.choices).toEqual([]);
      expect(last.usage).toMatchObject({ prompt_tokens: reference.usage.prompt_tokens, completion_tokens: reference.usage.completion_tokens });
      expect(chunks.slice(0, -1).every((c) => c.usage === null && c.id.startsWith('chatcmpl-'))).toBe(true);
      expect(s.loopback.log.at(-1)!.body['stream_options']).toEqual({ include_usage: true });
      const plain = (await sse(await post(s.server, PATH, { ...CHAT, stream: true }))) as ChatCompletionChunk[];
      expect(plain.every((c) => c.usage === undefined && c.choices.length === 1)).toBe(true);
    });

    it('passes response_format, tools and tool_choice through as sent, and relays the engine refusing them as a 400 with its words', async () => {
      s.loopback.fault = { type: 'status', status: 400, body: { object: 'error', message: 'tools are not supported by this model', type: 'BadRequestError', code: 400 } };
      try {
        const extra = {
          response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] } } },
          tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }],
          tool_choice: 'auto',
        };
        const res = await post(s.server, PATH, { ...CHAT, ...extra });
        const sent = s.loopback.log.at(-1)!.body;
        expect(sent['response_format']).toEqual(extra.response_format);
        expect(sent['tools']).toEqual(extra.tools);
        expect(sent['tool_choice']).toBe('auto');
        expect(res.status).toBe(400);
        const error = ((await res.json()) as { error: { code: string; message: string } }).error;
        expect(error.code).toBe('invalid_request');
        expect(error.message).toContain('tools are not supported by this model');
      } finally {
        s.loopback.fault = { type: 'none' };
      }
    });

    it("aborts the engine's generation when the client goes away mid-stream", async () => {
      s.loopback.fault = { type: 'drip', ms: 20 };
      const aborter = new AbortController();
      const res = await fetch(`${s.server.url}${PATH}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ ...CHAT, max_tokens: 100_000, stream: true }),
        signal: aborter.signal,
      });
      try {
        const reader = res.body!.getReader();
        let text = '';
        while (!text.includes('drip')) text += new TextDecoder().decode((await reader.read()).value);
        const logged = s.loopback.log.at(-1)!;
        aborter.abort();
        const until = performance.now() + 5000;
        while (!logged.aborted && performance.now() < until) await new Promise((r) => setTimeout(r, 10));
        expect(logged.aborted).toBe(true);
      } finally {
        s.loopback.fault = { type: 'none' };
      }
    });
  });
}
