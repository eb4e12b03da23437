/** The model list (`GET /v1/models`), OpenAI's shape. */
import './zod-config.ts';
import { z } from 'zod';

/**
 * The decision endpoints a model serves, below the base URL (our extension of the model object,
 * `decision_endpoints`): TypeSafe's Jev shape (its path and `/v1/systemone`) and OpenAI's Decisions.
 */
export const decisionEndpoints = ['/inference/jev/api/alpha/decisions', '/v1/systemone', '/v1/decisions'] as const;

export type ModelObject = { id: string; object: 'model'; created: number; owned_by: string; decision_endpoints?: string[] | undefined };
export type ModelList = { object: 'list'; data: ModelObject[] };

export const modelObjectSchema = z.object({
  id: z.string().min(1),
  object: z.literal('model'),
  created: z.int().min(0),
  owned_by: z.string(),
  decision_endpoints: z.array(z.string().startsWith('/')).optional(),
});

export const modelListSchema = z.object({
  object: z.literal('list'),
  data: z.array(modelObjectSchema),
});

/** The list with each model's `decision_endpoints` (every model the engine serves answers them all). */
export function withDecisionEndpoints(list: ModelList): ModelList {
  return { ...list, data: list.data.map((m) => ({ ...m, decision_endpoints: [...decisionEndpoints] })) };
}
