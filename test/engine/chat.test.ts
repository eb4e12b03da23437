import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatCompletionChunk, ChatMessage } from '../../src/contract/index.ts';
import { chatPromptIds } from '../../src/engine/chat/chat-prompt.ts';
import type { Engine } from '../../src/engine/engine.ts';
import type { LanguageModel } from '../../src/engine/model/language-model.ts';
import { argmax } from '../../src/engine/chat/sampler.ts';
import { loadEngine, skipMessage, testModels } from '../support/models.ts';
import { referenceLogProbs } from '../support/reference.ts';

const MESSAGES: ChatMessage[] = [
  { role: 'system', content: 'You tell short stories.' },
  { role: 'user', content: 'Tell me about a little dog and a red ball.' },
];

let n = 0;
const call = () => ({ id: `c${++n}` });

for (const m of testModels()) {
  describe.skipIf(!m.present)(`chat on ${m.id}`, () => {
    let engine: Engine;
    let lm: LanguageModel;
    beforeAll(async () => {
      engine = await loadEngine(m.root, m.id);
      lm = engine.languageModel!;
    });
    afterAll(async () => {
      await lm?.dispose();
    });

    const chat = (body: Record<string, unknown>, onChunk?: (c: ChatCompletionChunk) => void) =>
      engine.chat({ model: 'jev', messages: MESSAGES, ...body }, call(), onChunk);

    /** An independent greedy loop: a full-prompt forward pass per token, argmax of its softmax. */
    async function referenceGreedy(prompt: number[], steps: number): Promise<number[]> {
      const eos = new Set([lm.tokenizer.eos_token_id as number, ...[(lm.model.config as any).eos_token_id].flat()]);
      const out: number[] = [];
      for (let i = 0; i < steps; i++) {
        const token = argmax(await referenceLogProbs(lm, [...prompt, ...out]));
        if (eos.has(token)) break;
        out.push(token);
      }
      return out;
    }

    it('greedy output equals an independent greedy loop over full-prompt passes', async () => {
      const res = await chat({ temperature: 0, max_tokens: 16 });
      const ref = await referenceGreedy(chatPromptIds(lm, MESSAGES), 16);
      expect(res.choices[0]!.message.content).toBe(lm.tokenizer.decode(ref, { skip_special_tokens: true }));
      expect(res.usage.completion_tokens).toBe(ref.length);
      expect(res.id).toMatch(/^chatcmpl-/);
      expect(res.object).toBe('chat.completion');
    });

    it('streamed deltas: role first, then content, then finish_reason; they concatenate to the non-streamed text', async () => {
      const chunks: ChatCompletionChunk[] = [];
      const streamed = await chat({ temperature: 0, max_tokens: 20, stream: true }, (c) => chunks.push(c));
      const plain = await chat({ temperature: 0, max_tokens: 20 });
      expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
      const last = chunks.at(-1)!;
      expect(last.choices[0]!.finish_reason).toBe(plain.choices[0]!.finish_reason);
      expect(chunks.slice(0, -1).every((c) => c.choices[0]!.finish_reason === null)).toBe(true);
      const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
      expect(text).toBe(plain.choices[0]!.message.content);
      expect(streamed.choices[0]!.message.content).toBe(text);
    });

    it('max_tokens is respected exactly', async () => {
      const res = await chat({ temperature: 0, max_tokens: 5, stop: [] });
      const ref = await referenceGreedy(chatPromptIds(lm, MESSAGES), 5);
      if (ref.length === 5) {
        expect(res.usage.completion_tokens).toBe(5);
        expect(res.choices[0]!.finish_reason).toBe('length');
      } else {
        expect(res.choices[0]!.finish_reason).toBe('stop');
      }
    });

    it('a stop sequence cuts the text before it', async () => {
      const full = (await chat({ temperature: 0, max_tokens: 24 })).choices[0]!.message.content!;
      const stop = full.slice(Math.floor(full.length / 2), Math.floor(full.length / 2) + 3);
      expect(stop.length).toBe(3);
      const chunks: ChatCompletionChunk[] = [];
      const res = await chat({ temperature: 0, max_tokens: 24, stop, stream: true }, (c) => chunks.push(c));
      expect(res.choices[0]!.message.content).toBe(full.slice(0, full.indexOf(stop)));
      expect(res.choices[0]!.finish_reason).toBe('stop');
      expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(res.choices[0]!.message.content);
    });

    it('the same seed gives the same text; another seed another', async () => {
      const a = await chat({ temperature: 1, seed: 7, max_tokens: 24 });
      const b = await chat({ temperature: 1, seed: 7, max_tokens: 24 });
      expect(a.choices[0]!.message.content).toBe(b.choices[0]!.message.content);
      const others = await Promise.all([8, 9, 10].map((seed) => chat({ temperature: 1, seed, max_tokens: 24 })));
      expect(others.some((o) => o.choices[0]!.message.content !== a.choices[0]!.message.content)).toBe(true);
    });

    it('logprobs equal the log-softmax of the logits', async () => {
      const res = await chat({ temperature: 0, max_tokens: 4, logprobs: true, top_logprobs: 3 });
      const content = res.choices[0]!.logprobs!.content;
      const prompt = chatPromptIds(lm, MESSAGES);
      const ref = await referenceGreedy(prompt, 4);
      expect(content).toHaveLength(ref.length);
      for (const [i, entry] of content.entries()) {
        const lp = await referenceLogProbs(lm, [...prompt, ...ref.slice(0, i)]);
        expect(Math.abs(entry.logprob - lp[ref[i]!]!)).toBeLessThan(1e-4);
        expect(entry.top_logprobs).toHaveLength(3);
        expect(entry.top_logprobs[0]!.logprob).toBeGreaterThanOrEqual(entry.top_logprobs[1]!.logprob);
        expect(Math.abs(entry.top_logprobs[0]!.logprob - Math.max(...lp))).toBeLessThan(1e-4);
      }
    });

    it('a follow-up turn prefills only its new tokens and answers as a cold run does', async () => {
      const first = await chat({ temperature: 0, max_tokens: 12 });
      const followUp: ChatMessage[] = [
        ...MESSAGES,
        { role: 'assistant', content: first.choices[0]!.message.content! },
        { role: 'user', content: 'And then what happened?' },
      ];
      const before = lm.tokensFed;
      const warm = await engine.chat({ model: 'jev', messages: followUp, temperature: 0, max_tokens: 12 }, call());
      const prefilled = lm.tokensFed - before - Math.max(0, warm.usage.completion_tokens - 1);
      const cached = warm.usage.prompt_tokens_details!.cached_tokens;
      expect(cached).toBeGreaterThan(chatPromptIds(lm, MESSAGES).length - 2);
      expect(prefilled).toBe(warm.usage.prompt_tokens - cached);
      // Cold: with the prefix cache cleared, nothing is reused.
      await engine.clearCache();
      const cold = await engine.chat({ model: 'jev', messages: followUp, temperature: 0, max_tokens: 12 }, call());
      expect(cold.usage.prompt_tokens_details!.cached_tokens).toBe(0);
      expect(warm.choices[0]!.message.content).toBe(cold.choices[0]!.message.content);
      // …and both equal the independent greedy loop without any cache.
      const ref = await referenceGreedy(chatPromptIds(lm, followUp), 12);
      expect(warm.choices[0]!.message.content).toBe(lm.tokenizer.decode(ref, { skip_special_tokens: true }));
    });

    it('abort mid-stream stops within a token, and the next request is correct', async () => {
      const controller = new AbortController();
      const handle = call();
      let seen = 0;
      const aborted = engine
        .chat({ model: 'jev', messages: MESSAGES, temperature: 0, max_tokens: 200, stop: [] }, handle, () => {
          seen += 1;
          if (seen === 3) void engine.cancel(handle.id);
        })
        .catch((e) => e);
      const err = await aborted;
      expect(err.code).toBe('aborted');
      expect(seen).toBeLessThanOrEqual(4);
      void controller;
      const after = await chat({ temperature: 0, max_tokens: 16 });
      const ref = await referenceGreedy(chatPromptIds(lm, MESSAGES), 16);
      expect(after.choices[0]!.message.content).toBe(lm.tokenizer.decode(ref, { skip_special_tokens: true }));
    });

    it('one queue: concurrent decisions and chats each get their own result', async () => {
      const d = { model: 'jev', state: 'A dog in a park.', questions: { q: { type: 'noul', instructions: 'Is there a dog?' } } };
      const alone = await Promise.all([engine.decide(d, call()), chat({ temperature: 0, max_tokens: 8 })]);
      const mixed = await Promise.all([
        chat({ temperature: 0, max_tokens: 8 }),
        engine.decide(d, call()),
        chat({ temperature: 0, max_tokens: 8, messages: [{ role: 'user', content: 'Another one.' }] }),
        engine.decide(d, call()),
        chat({ temperature: 0, max_tokens: 8 }),
      ]);
      for (const r of [mixed[1], mixed[3]]) expect(Math.abs((r.answers['q'] as any).noul - (alone[0].answers['q'] as any).noul)).toBeLessThan(1e-4);
      for (const r of [mixed[0], mixed[4]]) expect(r.choices[0]!.message.content).toBe(alone[1].choices[0]!.message.content);
    });

    it('history past the context: 422 with the counts by default; drop_oldest keeps the system message', async () => {
      const long: ChatMessage[] = [{ role: 'system', content: 'Be brief.' }];
      for (let i = 0; i < 60; i++) long.push({ role: i % 2 ? 'assistant' : 'user', content: `turn ${i}: the dog ran to the park and played with the ball` });
      const err = await engine.chat({ model: 'jev', messages: long, max_tokens: 8 }, call()).catch((e) => e);
      expect(err.code).toBe('context_length_exceeded');
      expect(err.status).toBe(422);
      expect(err.details.context_length).toBe(lm.contextLength);
      const ok = await engine.chat({ model: 'jev', messages: long, max_tokens: 8, truncation: 'drop_oldest' }, call());
      expect(ok.usage.prompt_tokens + 8).toBeLessThanOrEqual(lm.contextLength);
    });

    it('refuses an unknown model with 404 model_not_found', async () => {
      const err = await engine.chat({ model: 'gpt-4', messages: MESSAGES }, call()).catch((e) => e);
      expect(err.status).toBe(404);
      expect(err.code).toBe('model_not_found');
    });
  });
  if (!m.present) it.skip(skipMessage(m.id, m.root), () => {});
}
