import { TINYSTORIES } from '../../scripts/models/roots.ts';
import type { Device } from './schema.ts';

/** What one (model, device) target measures, and how many times. */
export interface TargetPlan {
  model: string;
  device: Device;
  dtype: 'fp32' | 'q8';
  /** State sizes in tokens, each with its repetitions (fewer for the costly large states). */
  states: { tokens: number; reps: number }[];
  questions: number[];
  chat: { promptTokens: number; newTokens: number; reps: number };
  /** History ≈ userTokens + replyTokens + template; the follow-up turn adds a short question. */
  followup: { userTokens: number; replyTokens: number; reps: number };
}

export interface PlanOptions {
  quick: boolean;
  webgpu: boolean;
  models: string[] | null;
  hasTinyStories: boolean;
}

export const SMOL = 'smollm2-135m-random';
export { TINYSTORIES };

/**
 * Repetitions are chosen so the default run fits about 25 minutes on an idle 2-core machine:
 * the naive way at S = 1536, Q = 16 prefills ~27k tokens (5–6 min per repetition), so that state
 * gets 1 repetition, S = 512 (the target's configuration) gets 3 and S = 64 gets 5. Chat gets 5
 * repetitions (decode speeds of engine and pipeline differ by a few percent, less than the noise
 * of one run). TinyStories (656K parameters) is cheap and gets more. `--quick` runs one
 * repetition of a reduced grid (≈ 5 min).
 */
export function makePlan(o: PlanOptions): TargetPlan[] {
  const questions = [1, 4, 16];
  const plans: TargetPlan[] = [];
  const smol = () => plans.push(
    o.quick
      ? {
          model: SMOL,
          device: 'wasm',
          dtype: 'fp32',
          states: [
            { tokens: 64, reps: 1 },
            { tokens: 512, reps: 1 },
          ],
          questions,
          chat: { promptTokens: 200, newTokens: 16, reps: 1 },
          followup: { userTokens: 480, replyTokens: 8, reps: 1 },
        }
      : {
          model: SMOL,
          device: 'wasm',
          dtype: 'fp32',
          states: [
            { tokens: 64, reps: 5 },
            { tokens: 512, reps: 3 },
            { tokens: 1536, reps: 1 },
          ],
          questions,
          chat: { promptTokens: 380, newTokens: 64, reps: 5 },
          followup: { userTokens: 960, replyTokens: 16, reps: 3 },
        },
  );
  // TinyStories first: it takes a minute, so a problem shows before the long runs start.
  if (o.hasTinyStories) {
    // Context 512: the state, the system prompt (~55 tokens) and the longest question (~85) must fit.
    plans.push({
      model: TINYSTORIES,
      device: 'wasm',
      dtype: 'fp32',
      states: o.quick
        ? [{ tokens: 64, reps: 2 }]
        : [
            { tokens: 64, reps: 9 },
            { tokens: 320, reps: 7 },
          ],
      questions,
      chat: o.quick ? { promptTokens: 100, newTokens: 16, reps: 1 } : { promptTokens: 200, newTokens: 64, reps: 5 },
      followup: o.quick ? { userTokens: 200, replyTokens: 8, reps: 1 } : { userTokens: 360, replyTokens: 16, reps: 3 },
    });
    if (o.webgpu) {
      // WebGPU here is SwiftShader on the CPU (< 0.1 tok/s for the 135M model): only the tiny model.
      plans.push({
        model: TINYSTORIES,
        device: 'webgpu',
        dtype: 'fp32',
        states: [{ tokens: 64, reps: 2 }],
        questions: [1, 4],
        chat: { promptTokens: 64, newTokens: 16, reps: 1 },
        followup: { userTokens: 200, replyTokens: 8, reps: 1 },
      });
    }
  }
  smol();
  return o.models ? plans.filter((p) => o.models!.includes(p.model)) : plans;
}
