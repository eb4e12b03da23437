// Type-level checks (run by `tsc`): the schemas' types are exactly the documented types.
import { describe, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type {
  Answer, ChatCompletion, ChatCompletionChunk, ChatRequest, DecisionRequest, DecisionResponse, ModelList, Question, Usage,
  answerSchema, chatCompletionChunkSchema, chatCompletionSchema, chatRequestSchema, decisionRequestSchema, decisionResponseSchema,
  modelListSchema, questionSchema, usageSchema, DecisionRequestInput,
} from '../../src/contract/index.ts';
import { parseChatRequest, parseDecisionRequest } from '../../src/contract/index.ts';

describe('contract types', () => {
  it('match the schemas', () => {
    expectTypeOf<z.output<typeof decisionRequestSchema>>().toEqualTypeOf<DecisionRequest>();
    expectTypeOf<z.output<typeof questionSchema>>().toEqualTypeOf<Question>();
    expectTypeOf<z.output<typeof chatRequestSchema>>().toEqualTypeOf<ChatRequest>();
    expectTypeOf<z.output<typeof decisionResponseSchema>>().toEqualTypeOf<DecisionResponse>();
    expectTypeOf<z.output<typeof answerSchema>>().toEqualTypeOf<Answer>();
    expectTypeOf<z.output<typeof usageSchema>>().toEqualTypeOf<Usage>();
    expectTypeOf<z.output<typeof chatCompletionSchema>>().toExtend<ChatCompletion>();
    expectTypeOf<z.output<typeof chatCompletionChunkSchema>>().toExtend<ChatCompletionChunk>();
    expectTypeOf<z.output<typeof modelListSchema>>().toEqualTypeOf<ModelList>();
    expectTypeOf(parseDecisionRequest).returns.toEqualTypeOf<DecisionRequest>();
    expectTypeOf(parseChatRequest).returns.toEqualTypeOf<ChatRequest>();
  });

  it('take the lenient input shapes', () => {
    expectTypeOf({ model: 'jev', state: [{ type: 'text', text: 'x' }], questions: { q: { type: 'noul' as const } } }).toExtend<DecisionRequestInput>();
    expectTypeOf({ model: 'jev', state: 'x', questions: { q: { type: 'score' as const, criteria: ['a', 'b'] } }, calibrate: true }).toExtend<DecisionRequestInput>();
  });
});
