// The prefix cache in the engine: requests that begin like earlier ones feed only the rest, and
// answer as a cold engine does (within 1e-6). Each check runs beside an engine with the cache off
// (`prefixCacheBytes: 0`) on the same model; token counts come from the tokenizer, independently
// of the cache's own bookkeeping.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage, DecisionResponse, Question } from '../../src/contract/index.ts';
import { chatPromptIds } from '../../src/engine/chat/chat-prompt.ts';
import { promptFrame } from '../../src/engine/decision/decision-prompt.ts';
import type { Engine } from '../../src/engine/engine.ts';
import type { LanguageModel } from '../../src/engine/model/language-model.ts';
import { planQuestion } from '../../src/engine/decision/question-plan.ts';
import { outcomeDiff } from '../reliability/workload.ts';
import { loadEngine, testModels } from '../support/models.ts';

const STATE = 'Ticket 4412: my invoice for March was charged twice, once on the 3rd and again on the 5th. I want the second charge refunded.';
const OTHER_STATE = 'Ticket 4413: the app logs me out every time I open the settings page on my phone.';

const FIRST: Record<string, Question> = {
  refund: { type: 'noul', instructions: 'Does the customer ask for a refund?', criteria: { true: 'A refund is asked for', false: 'No refund is asked for' } },
  topic: { type: 'choice', instructions: 'What is the ticket about?', criteria: { billing: 'Invoices and charges', bug: 'Something broken', other: null } },
};
const SECOND: Record<string, Question> = {
  angry: { type: 'noul', instructions: 'Is the customer angry?', criteria: { true: 'Angry', false: 'Calm' } },
  urgency: { type: 'score', instructions: 'How urgent is it?', criteria: ['not urgent', 'somewhat', 'very urgent'] },
  channel: { type: 'choice', instructions: 'Which channel fits the reply?', criteria: { email: null, phone: null } },
};

const SYSTEM = `You are a careful support assistant for a billing team. ${'Answer briefly, cite the ticket number, never promise refunds you cannot give, and ask one question when anything is unclear. '.repeat(3)}`;

let n = 0;
const call = () => ({ id: `p${++n}` });
const lcp = (a: readonly number[], b: readonly number[]) => {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
};

for (const m of testModels().filter((x) => x.present)) {
  describe(`prefix cache on ${m.id}`, () => {
    let engine: Engine;
    let cold: Engine;
    let lm: LanguageModel;
    beforeAll(async () => {
      engine = await loadEngine(m.root, m.id);
      cold = await loadEngine(m.root, m.id, 'fp32', { prefixCacheBytes: 0 });
      lm = engine.languageModel!;
    });
    afterAll(async () => {
      await lm?.dispose();
      await cold?.languageModel?.dispose();
    });

    const decide = async (e: Engine, state: string, questions: Record<string, Question>, extra: Record<string, unknown> = {}) => {
      const before = e.languageModel!.tokensFed;
      const res = await e.decide({ model: 'jev', state, questions, ...extra }, call());
      return { res, fed: e.languageModel!.tokensFed - before };
    };
    const same = (a: DecisionResponse, b: DecisionResponse) => expect(outcomeDiff(a.answers, b.answers)).toEqual([]);
    /** The state prefix's tokens, and what each question feeds after it (its prompt and label rows). */
    const tokensOf = (state: string, questions: Record<string, Question>) => {
      const frame = promptFrame(lm, state);
      const prefix = lm.encode(frame.prefix, frame.addSpecialTokens);
      const plans = Object.values(questions).map((q) => planQuestion(lm, frame, q));
      for (const p of plans) expect(p.stateIds).toEqual(prefix); // the questions continue the whole state here
      return { prefix, plans, perQuestion: plans.map((p) => p.promptIds.length + p.scoring.rows.reduce((k, r) => k + r.length, 0)) };
    };
    /** Bytes a token of KV cache takes, from the graph's declared past key/value inputs. */
    const bytesPerToken = () => lm.kvInputs.reduce((k, input) => k + input.dims[1]! * input.dims[3]! * (input.type === 'float16' ? 2 : 4), 0);

    it('the same state with other questions feeds only the questions, and answers as a cold engine does', async () => {
      await engine.clearCache();
      const first = await decide(engine, STATE, FIRST);
      same(first.res, (await decide(cold, STATE, FIRST)).res);
      const { prefix, plans, perQuestion } = tokensOf(STATE, SECOND);
      const before = await engine.status();
      const repeat = await decide(engine, STATE, SECOND);
      const after = await engine.status();
      // The state is not fed again (a question with no prompt of its own needs its last token's distribution).
      const root = plans.some((p) => p.promptIds.length === 0) ? 1 : 0;
      expect(repeat.fed).toBe(perQuestion.reduce((a, b) => a + b, 0) + root);
      expect(after.prefixCache.cachedTokens - before.prefixCache.cachedTokens).toBe(prefix.length - root);
      expect(after.prefixCache.hits - before.prefixCache.hits).toBe(1);
      const coldRepeat = await decide(cold, STATE, SECOND);
      expect(coldRepeat.fed).toBe(prefix.length + perQuestion.reduce((a, b) => a + b, 0));
      same(repeat.res, coldRepeat.res);
      // usage is the request's own, whatever the cache saved
      expect(repeat.res.usage).toEqual(coldRepeat.res.usage);
    });

    it('one question on a state asked before: fed from the cached state, the same answer', async () => {
      await engine.clearCache();
      await decide(engine, STATE, FIRST);
      const q = { urgency: SECOND['urgency']! };
      const { prefix, plans } = tokensOf(STATE, q);
      const one = await decide(engine, STATE, q);
      expect(one.fed).toBe(plans[0]!.promptIds.length + plans[0]!.scoring.rows.reduce((k, r) => k + r.length, 0) + (plans[0]!.promptIds.length === 0 ? 1 : 0));
      const coldOne = await decide(cold, STATE, q);
      expect(coldOne.fed).toBeGreaterThan(one.fed + prefix.length - 2);
      same(one.res, coldOne.res);
      // And the other way round: a one-question request leaves its whole prompt; several questions then cut the state out of it.
      await engine.clearCache();
      await decide(engine, STATE, q);
      const many = await decide(engine, STATE, SECOND);
      const { perQuestion, plans: manyPlans } = tokensOf(STATE, SECOND);
      expect(many.fed).toBe(perQuestion.reduce((a, b) => a + b, 0) + (manyPlans.some((p) => p.promptIds.length === 0) ? 1 : 0));
      same(many.res, (await decide(cold, STATE, SECOND)).res);
    });

    it('a new state reuses the shared instruction header; calibrated answers equal the cold ones', async () => {
      await engine.clearCache();
      await decide(engine, STATE, FIRST);
      const a = tokensOf(STATE, FIRST).prefix;
      const b = tokensOf(OTHER_STATE, FIRST).prefix;
      const header = lcp(a, b);
      expect(header).toBeGreaterThan(0);
      const before = (await engine.status()).prefixCache.cachedTokens;
      const other = await decide(engine, OTHER_STATE, FIRST);
      expect((await engine.status()).prefixCache.cachedTokens - before).toBe(header);
      const coldOther = await decide(cold, OTHER_STATE, FIRST);
      expect(coldOther.fed - other.fed).toBe(header);
      same(other.res, coldOther.res);
      // Calibration's content-free pass shares the header too.
      same((await decide(engine, STATE, SECOND, { calibrate: true })).res, (await decide(cold, STATE, SECOND, { calibrate: true })).res);
    });

    it('a new conversation sharing a long system prompt reuses it; greedy replies and log-probs equal a cold engine', async () => {
      await engine.clearCache();
      const one: ChatMessage[] = [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: 'My invoice was charged twice.' },
      ];
      const two: ChatMessage[] = [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: 'How do I change my plan?' },
      ];
      const body = { model: 'jev', temperature: 0, max_tokens: 5, logprobs: true, top_logprobs: 2 };
      const first = await engine.chat({ ...body, messages: one }, call());
      expect(first.usage.prompt_tokens_details!.cached_tokens).toBe(0);
      const second = await engine.chat({ ...body, messages: two }, call());
      const shared = lcp(chatPromptIds(lm, one), chatPromptIds(lm, two));
      expect(shared).toBeGreaterThan(60);
      expect(second.usage.prompt_tokens_details!.cached_tokens).toBe(shared);
      const coldSecond = await cold.chat({ ...body, messages: two }, call());
      expect(coldSecond.usage.prompt_tokens_details!.cached_tokens).toBe(0);
      expect(second.choices[0]!.message).toEqual(coldSecond.choices[0]!.message);
      expect(outcomeDiff(second.choices[0]!.logprobs, coldSecond.choices[0]!.logprobs, 1e-5)).toEqual([]);
      // The first conversation's next turn still finds its own history.
      const followUp = [...one, first.choices[0]!.message as ChatMessage, { role: 'user' as const, content: 'It was in March.' }];
      const next = await engine.chat({ ...body, messages: followUp }, call());
      expect(next.usage.prompt_tokens_details!.cached_tokens).toBeGreaterThanOrEqual(chatPromptIds(lm, one).length);
    });

    it('status() counts the cache; the live tensors are its own; clearCache() frees them and the next request runs cold', async () => {
      await engine.clearCache();
      await decide(engine, STATE, FIRST);
      await engine.chat({ model: 'jev', messages: [{ role: 'user', content: 'Hello.' }], max_tokens: 2, temperature: 0 }, call());
      const s = await engine.status();
      expect(s.prefixCache.entries).toBeGreaterThanOrEqual(2);
      expect(s.prefixCache.bytes).toBe(s.prefixCache.tokens * bytesPerToken());
      expect(s.counters.liveTensors).toBe(s.prefixCache.entries * lm.kvInputs.length);
      await engine.clearCache();
      const c = await engine.status();
      expect(c.prefixCache).toMatchObject({ entries: 0, tokens: 0, bytes: 0 });
      expect(c.counters.liveTensors).toBe(0);
      expect((await decide(engine, STATE, SECOND)).fed).toBe((await decide(cold, STATE, SECOND)).fed);
    });

    it('keeps to its byte budget: least recently used prompts go first', async () => {
      const stateBytes = tokensOf(STATE, FIRST).prefix.length * bytesPerToken();
      const small = await loadEngine(m.root, m.id, 'fp32', { prefixCacheBytes: Math.floor(stateBytes * 2.5) });
      try {
        const states = [STATE, OTHER_STATE, 'Ticket 4414: where is my parcel?', 'Ticket 4415: please close my account.'];
        for (const s of states) await small.decide({ model: 'jev', state: s, questions: FIRST }, call());
        const st = await small.status();
        expect(st.prefixCache.bytes).toBeLessThanOrEqual(st.prefixCache.maxBytes);
        expect(st.prefixCache.evictions).toBeGreaterThan(0);
        // The latest state is held; the first one is gone (only the header is reused for it).
        const lastFed = await decide(small, states[3]!, FIRST);
        const firstFed = await decide(small, STATE, FIRST);
        expect(lastFed.fed).toBeLessThan(firstFed.fed);
      } finally {
        await small.languageModel?.dispose();
      }
    });

    it('under memory pressure the cache is dropped and the request served, not failed', async () => {
      await engine.clearCache();
      await decide(engine, STATE, FIRST);
      const held = (await engine.status()).prefixCache;
      expect(held.entries).toBeGreaterThan(0);
      // The next pass fails to allocate while anything is cached, as a tab short of memory would.
      const forward = lm.forward.bind(lm);
      let refused = 0;
      lm.forward = async (...args) => {
        if ((await engine.status()).prefixCache.entries > 0 && refused === 0) {
          refused++;
          throw new RangeError('Array buffer allocation failed');
        }
        return forward(...args);
      };
      try {
        // Another state: its header is cut from the cached one, which stays in the cache meanwhile.
        const res = await decide(engine, OTHER_STATE, SECOND);
        expect(refused).toBe(1);
        same(res.res, (await decide(cold, OTHER_STATE, SECOND)).res);
        const after = (await engine.status()).prefixCache;
        expect(after.evictions - held.evictions).toBe(held.entries);
        expect((await engine.status()).counters.liveTensors).toBe(after.entries * lm.kvInputs.length);
      } finally {
        lm.forward = forward;
      }
      // Any other failure is the request's own: not retried.
      lm.forward = async () => {
        throw new Error('some other fault');
      };
      try {
        await expect(engine.decide({ model: 'jev', state: STATE, questions: FIRST }, call())).rejects.toMatchObject({ code: 'engine_error' });
      } finally {
        lm.forward = forward;
      }
      expect((await engine.status()).counters.liveTensors).toBe((await engine.status()).prefixCache.entries * lm.kvInputs.length);
    });
  });
}

describe('prefix cache on a q8 model (activations quantized per pass)', () => {
  it('decisions neither read nor write the cache (their answers would depend on earlier requests); chat still reuses it', async () => {
    const m = testModels()[0]!;
    const engine = await loadEngine(m.root, m.id, 'q8');
    try {
      const lm = engine.languageModel!;
      const ask = async () => {
        const before = lm.tokensFed;
        const res = await engine.decide({ model: 'jev', state: STATE, questions: SECOND }, call());
        return { answers: res.answers, fed: lm.tokensFed - before };
      };
      const a = await ask();
      const b = await ask();
      expect(b.fed).toBe(a.fed);
      expect(b.answers).toEqual(a.answers); // bit for bit: the same passes both times
      expect((await engine.status()).prefixCache).toMatchObject({ entries: 0, hits: 0, misses: 0 });
      const messages: ChatMessage[] = [{ role: 'user', content: 'Hello there, how are you?' }];
      const first = await engine.chat({ model: 'jev', messages, temperature: 0, max_tokens: 3 }, call());
      const next = await engine.chat({ model: 'jev', messages: [...messages, first.choices[0]!.message as ChatMessage, { role: 'user', content: 'And then?' }], temperature: 0, max_tokens: 3 }, call());
      expect(next.usage.prompt_tokens_details!.cached_tokens).toBeGreaterThan(chatPromptIds(lm, messages).length - 2);
    } finally {
      await engine.languageModel?.dispose();
    }
  });
});
