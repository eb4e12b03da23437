/**
 * Explains an answer's confidence where it is shown (issue 17, item 2). Confidence is not the top
 * probability: it is how sharply the probabilities single out an answer, times the answer mass,
 * the share of the model's next-token probability that fell on the allowed answers at all (see
 * src/engine/decision/confidence.ts). A weak model can put almost none of its mass there; the probabilities
 * are then renormalised over a sliver, and "account 100.0 %" beside "Confidence 0.0 %" is right.
 */
import type { QuestionType } from '../../contract/index.ts';
import { formatShare } from '../shared/format.ts';

/** Under this answer mass, the card says plainly that the allowed answers were barely considered. */
export const LOW_ANSWER_MASS = 0.05;

const MASS_FORMULA = 'answer mass = the next-token probability of the allowed answers, summed, before renormalising over them';

/** The formula behind an answer's confidence, for a tooltip. */
export function confidenceFormula(type: QuestionType): string {
  switch (type) {
    case 'choice':
      return `confidence = (1 − H(p) / ln K) × answer mass, where H(p) is the entropy of the K option probabilities; ${MASS_FORMULA}`;
    case 'score':
      return `confidence = (1 − σ / σmax) × answer mass, where σ is the spread (standard deviation) of the grade probabilities and σmax = (K − 1) / 2 on K grades; ${MASS_FORMULA}`;
    case 'noul':
      return MASS_FORMULA;
    default: {
      const never: never = type;
      return never;
    }
  }
}

/** The sentence around the mass: the text before it and after it. */
function lead(type: QuestionType): [string, string] {
  switch (type) {
    case 'choice':
      return ['Confidence is how sharply the model singles out one option, times the share of its next-token probability that fell on the allowed answers: here ', '.'];
    case 'score':
      return ["Confidence is how narrowly the model's grades are spread, times the share of its next-token probability that fell on the allowed answers: here ", '.'];
    case 'noul':
      return ['The model put ', ' of its next-token probability on true or false; the probabilities above are renormalised over that share.'];
    default: {
      const never: never = type;
      return never;
    }
  }
}

/** The line under an answer that says what its confidence measures and how much mass the answers got. */
export function ConfidenceNote({ type, answerMass }: { type: QuestionType; answerMass: number }) {
  const [before, after] = lead(type);
  const low = answerMass < LOW_ANSWER_MASS;
  return (
    <p class={low ? 'confidence-note low' : 'confidence-note'} data-testid="confidence-note" title={confidenceFormula(type)}>
      {before}
      <span class="mass" data-testid="answer-mass" data-value={String(answerMass)}>
        {formatShare(answerMass)}
      </span>
      {after}
      {low && (
        <>
          {' '}
          <strong>The model barely considered the allowed answers: the probabilities are spread over a small share of its prediction, so read them with care.</strong>
        </>
      )}
    </p>
  );
}
