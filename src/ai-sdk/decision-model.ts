/**
 * The AI SDK's decision model (`Experimental_DecisionModelV4`) over a client's
 * `decisions.create`: one Jev-shape request per call, answered by the engine in the page (or the
 * server a remote client names), its probabilities passed on at full precision.
 *
 * - `boolean` answers carry P(true); `choice` and `score` their complete distributions, keyed as
 *   the AI SDK checks them (option keys; grade indices "0", "1", …), with `choice` the most
 *   probable option and `score` the probability-weighted mean the engine computes.
 * - Refusal, by the one rule of contract/refusal.ts: a question whose labels got less than the
 *   floor of the model's next-token probability (the Jev shape's `answer_mass`, before
 *   renormalising) answers `{ type: 'refusal' }`; `experimental_decide` then throws its
 *   DecisionRefusalError naming it. The floor is the provider's `refuseBelowLabelMass` (by default
 *   the client's, `createClient({ refuseBelowLabelMass })`), or the
 *   `refuse_below_label_mass` of the calibration profile the call names (inline, or by id among the
 *   client's saved profiles), which overrides it, as it overrides the client's in OpenAI's shape.
 * - `providerMetadata.jev`: per question `confidence` (choice, score) and `answerMass`, and the
 *   request id. `providerOptions.jev` may carry the Jev shape's extensions `calibrate`,
 *   `calibration` and `prediction_set` (then `providerMetadata.jev.predictionSet`).
 */
import type {
  Experimental_DecisionModelV4 as DecisionModelV4,
  Experimental_DecisionModelV4Answer as DecisionAnswer,
  Experimental_DecisionModelV4CallOptions as DecisionCallOptions,
  Experimental_DecisionModelV4Result as DecisionResult,
  JSONObject,
  SharedV4Warning,
} from '@ai-sdk/provider';
import { isPlainObject, refusesAnswer, type Answer, type DecisionResponse, type QuestionInput } from '../contract/index.ts';
import { decisionQuestion, decisionState } from './decision-input.ts';
import { PROVIDER_KEY, type JevLocalClient } from './jev-local-client.ts';

/** `providerOptions.jev` keys passed on to the Jev request as they are (our extensions). */
const PASSED_OPTIONS = ['calibrate', 'calibration', 'prediction_set'] as const;

export interface JevDecisionModelSettings {
  /** The provider's floor: a question whose labels got less of the next-token probability answers `refusal`; 0 (default): never. */
  refuseBelowLabelMass: number;
}

export class JevDecisionModel implements DecisionModelV4 {
  readonly specificationVersion = 'v4';
  readonly provider = `${PROVIDER_KEY}.decision`;
  readonly supportedQuestionTypes = ['boolean', 'choice', 'score'] as const;

  constructor(
    readonly modelId: string,
    private readonly client: JevLocalClient,
    private readonly settings: JevDecisionModelSettings,
  ) {}

  async doDecide(options: DecisionCallOptions): Promise<DecisionResult> {
    const warnings: SharedV4Warning[] = [];
    if (options.reasoning !== undefined && options.reasoning !== 'provider-default' && options.reasoning !== 'none') {
      warnings.push({ type: 'unsupported', feature: 'reasoning', details: 'A decision reads the next-token distribution over each question\'s labels; the model does not think first.' });
    }
    if (options.maxOutputTokens !== undefined) {
      warnings.push({ type: 'unsupported', feature: 'maxOutputTokens', details: 'A decision scores its labels; it generates no text.' });
    }
    const extensions: Record<string, unknown> = {};
    const given = (options.providerOptions?.[PROVIDER_KEY] ?? {}) as Record<string, unknown>;
    for (const [key, value] of Object.entries(given)) {
      if ((PASSED_OPTIONS as readonly string[]).includes(key)) extensions[key] = value;
      else warnings.push({ type: 'unsupported', feature: `providerOptions.${PROVIDER_KEY}.${key}` });
    }
    const questions: Record<string, QuestionInput> = {};
    for (const id of Object.keys(options.questions)) questions[id] = decisionQuestion(options.questions[id]!);
    const body = {
      model: this.modelId,
      state: decisionState(options.state),
      questions,
      ...extensions,
      include: ['answer_mass'],
    };
    const response = await this.client.decisions.create(body, { signal: options.abortSignal });
    return this.result(response, warnings, body, this.floor(extensions['calibration']));
  }

  /** The floor of the profile the call names, where it has one, else the provider's. */
  private floor(calibration: unknown): number {
    const profile: unknown = typeof calibration === 'string' ? (this.client.calibration?.get(calibration) ?? null) : calibration;
    const own = isPlainObject(profile) ? profile['refuse_below_label_mass'] : undefined;
    return typeof own === 'number' ? own : this.settings.refuseBelowLabelMass;
  }

  private result(response: DecisionResponse, warnings: SharedV4Warning[], body: unknown, floor: number): DecisionResult {
    const answers: Record<string, DecisionAnswer> = {};
    const confidence: JSONObject = {};
    const answerMass: JSONObject = {};
    const predictionSet: JSONObject = {};
    for (const [id, answer] of Object.entries(response.answers)) {
      if (answer.answer_mass !== undefined) answerMass[id] = answer.answer_mass;
      if (answer.type !== 'noul') confidence[id] = answer.confidence;
      if (answer.prediction_set !== undefined) predictionSet[id] = answer.prediction_set;
      const refused = answer.answer_mass !== undefined && refusesAnswer(answer.answer_mass, floor);
      answers[id] = refused ? { type: 'refusal' } : toAnswer(answer);
    }
    const metadata: JSONObject = { id: response.id, confidence, answerMass };
    if (Object.keys(predictionSet).length > 0) metadata['predictionSet'] = predictionSet;
    return {
      answers,
      usage: { inputTokens: response.usage.input_tokens, outputTokens: response.usage.output_tokens },
      warnings,
      providerMetadata: { [PROVIDER_KEY]: metadata },
      response: { id: response.id, modelId: response.model, timestamp: new Date(), body: { request: body, response } },
    };
  }
}

function toAnswer(answer: Answer): DecisionAnswer {
  switch (answer.type) {
    case 'noul':
      return { type: 'boolean', probability: answer.noul };
    case 'choice':
      return { type: 'choice', choice: answer.choice, probabilities: { ...answer.probabilities } };
    case 'score':
      return { type: 'score', score: answer.score, probabilities: { ...answer.probabilities } };
    default: {
      const never: never = answer;
      return never;
    }
  }
}
