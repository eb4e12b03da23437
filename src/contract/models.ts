/** The model list (`GET /v1/models`), OpenAI's shape. */
import './zod-config.ts';
import { z } from 'zod';

export type ModelObject = { id: string; object: 'model'; created: number; owned_by: string };
export type ModelList = { object: 'list'; data: ModelObject[] };

export const modelObjectSchema = z.object({
  id: z.string().min(1),
  object: z.literal('model'),
  created: z.int().min(0),
  owned_by: z.string(),
});

export const modelListSchema = z.object({
  object: z.literal('list'),
  data: z.array(modelObjectSchema),
});
