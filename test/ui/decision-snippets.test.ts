/**
 * The Decisions tab's snippets in OpenAI's shape and through the AI SDK provider: each body, read
 * back by the server's own adapter (contract/openai-decision-adapter.ts) or the provider's own
 * mapping (ai-sdk/decision-input.ts), is the Jev request on screen, question by question, as the
 * Jev parser normalizes it. So the engine reads the same prompt on every form.
 */
import { describe, expect, it } from 'vitest';
import { decisionQuestion } from '../../src/ai-sdk/decision-input.ts';
import { parseDecisionRequest } from '../../src/contract/decision-request.ts';
import { toJevRequests } from '../../src/contract/openai-decision-adapter.ts';
import { parseOpenAIDecisionRequest } from '../../src/contract/openai-decision-request.ts';
import { toAiSdkDecideCall } from '../../src/ui/shared/ai-sdk-decision-snippet.ts';
import { openaiDecisionCode, toOpenAIDecisionBody } from '../../src/ui/shared/openai-decision-snippet.ts';
import { decisionSnippets } from '../../src/ui/shared/snippets.ts';
import { PRESETS } from '../../src/ui/state/presets.ts';

const HAND = {
  model: 'jev',
  state: 'The little dog lost his red ball in the park.',
  questions: {
    place: { type: 'choice', instructions: 'Where?', criteria: { '2': 'a number key first', park: 'Outside', home: '' } },
    sad: { type: 'noul', instructions: 'Is the dog sad?', criteria: { true: '', false: '' } },
    mood: { type: 'score', instructions: 'How sad?', criteria: ['calm', 'sad', 'crying'] },
  },
};

/** The Jev request's questions with the noul descriptions removed (what a predicate carries). */
function withoutNoulCriteria(request: { questions: Record<string, unknown> }) {
  const questions: Record<string, unknown> = {};
  for (const [k, q] of Object.entries(request.questions)) {
    const question = q as { type: string; instructions: string };
    questions[k] = question.type === 'noul' ? { type: 'noul', instructions: question.instructions } : q;
  }
  return { ...request, questions };
}

const requests = [HAND, ...PRESETS.map((p) => ({ model: 'jev', state: p.state, questions: p.questions }))];

describe("the OpenAI Decisions snippet's body", () => {
  for (const request of requests) {
    it(`reads back, through the server's adapter, as the Jev request (${Object.keys(request.questions).join(', ')})`, () => {
      const { body, droppedCriteria } = toOpenAIDecisionBody(request);
      const parts = toJevRequests(parseOpenAIDecisionRequest(body));
      expect(parts).toHaveLength(1);
      const served = parseDecisionRequest(parts[0]!.body);
      const want = parseDecisionRequest(withoutNoulCriteria(request));
      expect(served.state).toBe(want.state);
      expect(Object.keys(served.questions)).toEqual(Object.keys(want.questions));
      expect(served.questions).toEqual(want.questions);
      // Named in the comment exactly where the draft gave a yes/no meaning that the shape cannot carry.
      const described = Object.entries(request.questions)
        .filter(([, q]) => {
          const c = (q as { type: string; criteria?: { true?: string; false?: string } }).criteria;
          return (q as { type: string }).type === 'noul' && !!(c?.true || c?.false);
        })
        .map(([k]) => k);
      expect(droppedCriteria).toEqual(described);
    });
  }

  it('keeps the extensions the shape accepts and says what it leaves out', () => {
    const request = { ...HAND, calibrate: true, calibration: 'tickets', prediction_set: { alpha: 0.1 } };
    const { body } = toOpenAIDecisionBody(request);
    expect(body['calibrate']).toBe(true);
    expect(body['calibration']).toBe('tickets');
    expect(body).not.toHaveProperty('prediction_set');
    const code = openaiDecisionCode('http://x.test', request);
    expect(code).toContain("baseURL: 'http://x.test/v1'");
    expect(code).toContain('prediction_set is the Jev shape');
    expect(code).toContain('openai.decisions.create(');
    expect(openaiDecisionCode('http://x.test', { model: 'jev', state: 's', questions: PRESETS[0]!.questions })).toContain('those of "urgent" are not sent');
  });
});

describe("the AI SDK snippet's call", () => {
  for (const request of requests) {
    it(`maps, through the provider's own mapping, to the Jev request's questions (${Object.keys(request.questions).join(', ')})`, () => {
      const { state, questions, providerOptions } = toAiSdkDecideCall(request);
      expect(state).toBe(request.state);
      expect(providerOptions).toBeNull();
      const served: Record<string, unknown> = {};
      for (const [k, q] of Object.entries(questions)) served[k] = decisionQuestion(q as Parameters<typeof decisionQuestion>[0]);
      expect(parseDecisionRequest({ model: 'jev', state, questions: served }).questions).toEqual(parseDecisionRequest(request).questions);
    });
  }

  it('puts the extensions in providerOptions.jev', () => {
    const call = toAiSdkDecideCall({ ...HAND, calibrate: true, calibration: 'p', prediction_set: { alpha: 0.2 } });
    expect(call.providerOptions).toEqual({ jev: { calibrate: true, calibration: 'p', prediction_set: { alpha: 0.2 } } });
  });
});

describe('decisionSnippets', () => {
  it('offers curl, fetch, openai.decisions.create and the AI SDK, each naming its call', () => {
    const snippets = decisionSnippets('http://x.test', HAND);
    expect(snippets.map((s) => s.kind)).toEqual(['curl', 'fetch', 'openai-decisions', 'ai-sdk']);
    expect(snippets[3]!.code).toContain("jevLocal(client).decisionModel('jev')");
    expect(snippets[3]!.code).toContain('"type": "boolean"');
    expect(snippets[3]!.code).not.toContain('"noul"');
  });
});
