/**
 * The decision request's calibration extensions, applied to each answer's probabilities: a fitted
 * profile (`calibration`) and split-conformal prediction sets (`prediction_set`). The profiles are
 * checked once per request, before any forward pass, against the model version that serves it,
 * its `calibrate` flag and each of its questions (docs/decisions.md, "Extension fields"). The
 * maps themselves are those of calibration.ts, which the evaluation fits with.
 */
import {
  JevError,
  profileMessages,
  questionFingerprint,
  type CalibrationProfile,
  type DecisionRequest,
  type ProfileRef,
  type Question,
  type QuestionFit,
  type QuestionProfile,
} from '../../contract/index.ts';
import { applyFit, conformalThreshold, predictionSet } from './calibration.ts';

/** What the request's profiles say about one question. */
export interface QuestionCalibration {
  /** The question's answers in the response's order (answerOrder): the order of a prediction set. */
  order: readonly string[];
  /** The map of `calibration` to apply, in the profile's answer order; null: none asked. */
  fit: { answers: readonly string[]; fit: QuestionFit } | null;
  /** The prediction set's map and threshold q̂ (on that map's scale); null: no set asked. */
  set: { answers: readonly string[]; fit: QuestionFit; threshold: number } | null;
}

/** Question key → its calibration; null when the request asks for neither extension. */
export type CalibrationPlan = Record<string, QuestionCalibration> | null;

/** The answers of a question in the engine's order: noul `true`, `false`; choice keys; score grade indices. */
export function answerOrder(question: Question): string[] {
  switch (question.type) {
    case 'noul':
      return ['true', 'false'];
    case 'choice':
      return Object.keys(question.criteria);
    case 'score':
      return question.criteria.map((_, i) => String(i));
    default: {
      const never: never = question;
      throw new Error(`unknown question type ${(never as { type: string }).type}`);
    }
  }
}

/**
 * Checks the request's profiles against the model version and the questions, and resolves, per
 * question, the fit to apply and the prediction set's threshold. Throws JevError: 400
 * `invalid_request` for a profile id that reached the engine unresolved, or a prediction set
 * without a profile; 422 `unprocessable` for a profile of another model version, another
 * `calibrate`, or without the question (or its conformal scores).
 */
export function planCalibration(request: DecisionRequest, model: string): CalibrationPlan {
  const setAsked = request.prediction_set;
  if (request.calibration === null && setAsked === null) return null;
  const calibration = request.calibration === null ? null : checkedProfile(request.calibration, 'calibration', request, model);
  let setSource: { profile: CalibrationProfile; param: string } | null = null;
  if (setAsked !== null) {
    if (setAsked.profile !== null) {
      setSource = { profile: checkedProfile(setAsked.profile, 'prediction_set.profile', request, model), param: 'prediction_set.profile' };
    } else if (calibration !== null) {
      setSource = { profile: calibration, param: 'calibration' };
    } else {
      throw new JevError('invalid_request', profileMessages.predictionSetNeedsProfile('prediction_set.profile'), {
        param: 'prediction_set.profile',
      });
    }
  }

  const plan: Record<string, QuestionCalibration> = Object.create(null);
  for (const [key, question] of Object.entries(request.questions)) {
    const fingerprint = questionFingerprint(question);
    const answers = answerOrder(question);
    const fitEntry = calibration === null ? null : entryFor(calibration, 'calibration', key, question, fingerprint, answers);
    let set: QuestionCalibration['set'] = null;
    if (setSource !== null && setAsked !== null) {
      const entry = entryFor(setSource.profile, setSource.param, key, question, fingerprint, answers);
      const scores = entry.conformal?.scores ?? [];
      if (scores.length === 0) {
        throw new JevError('unprocessable', profileMessages.noConformalScores(setSource.param, setSource.profile.id, key), {
          param: setSource.param,
          details: { profile: setSource.profile.id, question: key, fingerprint },
        });
      }
      // The schema does not promise the order; the threshold takes ascending scores.
      const sorted = [...scores].sort((a, b) => a - b);
      set = { answers: entry.answers, fit: entry.fit, threshold: conformalThreshold(sorted, setAsked.alpha) };
    }
    plan[key] = { order: answers, fit: fitEntry === null ? null : { answers: fitEntry.answers, fit: fitEntry.fit }, set };
  }
  return plan;
}

/**
 * One question's probabilities (in `answers` order) through its calibration: the calibrated
 * probabilities, and the prediction set's answers (in the response's order) when one was asked.
 */
export function calibrateAnswer(
  calibration: QuestionCalibration,
  answers: readonly string[],
  probabilities: readonly number[],
): { probabilities: number[]; set: string[] | null } {
  const calibrated = calibration.fit ? fitIn(answers, probabilities, calibration.fit.answers, calibration.fit.fit) : [...probabilities];
  let set: string[] | null = null;
  if (calibration.set) {
    const onScale = fitIn(answers, probabilities, calibration.set.answers, calibration.set.fit);
    const members = new Set(predictionSet(onScale, calibration.set.threshold).map((i) => answers[i]!));
    set = calibration.order.filter((a) => members.has(a));
  }
  return { probabilities: calibrated, set };
}

/** Applies a fit in the profile's answer order (Platt's first answer is the profile's), back in `answers` order. */
function fitIn(answers: readonly string[], probabilities: readonly number[], fitAnswers: readonly string[], fit: QuestionFit): number[] {
  const mapped = applyFit(
    fitAnswers.map((a) => probabilities[answers.indexOf(a)]!),
    fit,
  );
  return answers.map((a) => mapped[fitAnswers.indexOf(a)]!);
}

function checkedProfile(ref: ProfileRef, param: string, request: DecisionRequest, model: string): CalibrationProfile {
  if (typeof ref === 'string') {
    throw new JevError('invalid_request', profileMessages.unresolvedId(param, ref), { param, details: { profile: ref } });
  }
  if (ref.model !== model) {
    throw new JevError('unprocessable', profileMessages.modelMismatch(param, ref.id, ref.model, model), {
      param,
      details: { profile: ref.id, profile_model: ref.model, model },
    });
  }
  if (ref.calibrate !== request.calibrate) {
    throw new JevError('unprocessable', profileMessages.calibrateMismatch(param, ref.id, ref.calibrate, request.calibrate), {
      param,
      details: { profile: ref.id, profile_calibrate: ref.calibrate, calibrate: request.calibrate },
    });
  }
  return ref;
}

function entryFor(
  profile: CalibrationProfile,
  param: string,
  key: string,
  question: Question,
  fingerprint: string,
  answers: readonly string[],
): QuestionProfile {
  const details = { profile: profile.id, question: key, fingerprint };
  const entry = Object.hasOwn(profile.questions, fingerprint) ? profile.questions[fingerprint]! : null;
  if (entry === null || entry.type !== question.type) {
    throw new JevError('unprocessable', profileMessages.questionMissing(param, profile.id, key), { param, details });
  }
  const same = entry.answers.length === answers.length && answers.every((a) => entry.answers.includes(a));
  if (!same) {
    throw new JevError('unprocessable', profileMessages.answersDiffer(param, profile.id, key, entry.answers, answers), { param, details });
  }
  if (entry.fit.method === 'platt' && answers.length !== 2) {
    throw new JevError('unprocessable', profileMessages.fitNeedsTwoAnswers(param, profile.id, key, answers.length), { param, details });
  }
  return entry;
}
