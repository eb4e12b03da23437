/**
 * `client.decisions.createOpenAI`: OpenAI's Decisions shape (`POST /v1/decisions`) served by the
 * client's own `decisions.create`, the Jev shape's one path into the engine
 * (contract/openai-decision-adapter.ts). So a decision of either shape takes the same parser,
 * prompt builder and forward passes, and gives the same probabilities, bit for bit, from the same
 * prefix-cache state (docs/decisions.md, "OpenAI's shape").
 */
import {
  checkBodyBounds,
  isPlainObject,
  JevError,
  labelMassFloorSchema,
  parseOpenAIDecisionRequest,
  toJevRequests,
  toOpenAIDecision,
  toOpenAIError,
  type CalibrationProfile,
  type DecisionResponse,
  type OpenAIDecision,
} from '../contract/index.ts';
import type { CallOptions } from './jev-client.ts';

/** How a client answers decisions beyond their probabilities: `createClient({ refuseBelowLabelMass })`. */
export interface DecisionPolicy {
  /**
   * The label-mass floor (0..1, default 0: never) below which a question is answered with a
   * refusal in OpenAI's shape (contract/refusal.ts); a calibration profile's
   * `refuse_below_label_mass`, where the request names one, overrides it.
   */
  refuseBelowLabelMass?: number | undefined;
}

export interface OpenAIDecisionsDeps {
  /** The client's Jev `decisions.create` (profile ids resolved there). */
  create(request: unknown, options?: CallOptions): Promise<DecisionResponse>;
  /** A saved calibration profile by id (its floor), or null. */
  profile(id: string): CalibrationProfile | null;
  /** The model ids a request may name (asked only when it names another than `jev`). */
  modelIds(): Promise<readonly string[]>;
  policy: DecisionPolicy;
}

/** Checks a client's policy; throws JevError `invalid_request` naming the option. */
export function checkDecisionPolicy(policy: DecisionPolicy): DecisionPolicy {
  const floor = policy.refuseBelowLabelMass;
  if (floor !== undefined && !labelMassFloorSchema.safeParse(floor).success) {
    throw new JevError('invalid_request', `'refuseBelowLabelMass' must be a number from 0 to 1, got ${String(floor)}.`, { param: 'refuseBelowLabelMass' });
  }
  return policy;
}

/** The `createOpenAI` method over a client's Jev `create`. */
export function openAIDecisions(deps: OpenAIDecisionsDeps): (request: unknown, options?: CallOptions) => Promise<OpenAIDecision> {
  return async (request, options) => {
    checkBodyBounds(request);
    const parsed = parseOpenAIDecisionRequest(request);
    const ids = parsed.model === 'jev' ? null : await deps.modelIds();
    if (ids && !ids.includes(parsed.model)) {
      throw new JevError('model_not_found', `The model ${JSON.stringify(parsed.model)} does not exist here; use ${ids.map((id) => JSON.stringify(id)).join(' or ')}.`, {
        param: 'model',
      });
    }
    const parts = toJevRequests(parsed);
    const responses: DecisionResponse[] = [];
    for (const part of parts) {
      try {
        responses.push(await deps.create(part.body, options));
      } catch (e) {
        throw e instanceof JevError ? toOpenAIError(e, part) : e;
      }
    }
    return toOpenAIDecision(parsed, parts, responses, floorOf(parsed.calibration, deps));
  };
}

/** The floor of the request's profile where it has one (the engine has checked an inline profile by now), else the client's. */
function floorOf(calibration: unknown, deps: OpenAIDecisionsDeps): number {
  const profile: unknown = typeof calibration === 'string' ? deps.profile(calibration) : calibration;
  const own = isPlainObject(profile) ? profile['refuse_below_label_mass'] : undefined;
  return typeof own === 'number' ? own : (deps.policy.refuseBelowLabelMass ?? 0);
}
