import type { Answer } from '../../contract/index.ts';
import { formatPercent } from '../shared/format.ts';
import { ProbabilityBars, type Bar } from '../shared/probability-bars.tsx';
import { AnswerPromptDetails } from './answer-prompt.tsx';
import { ConfidenceNote, confidenceFormula } from './confidence-note.tsx';
import { PredictionSet } from './prediction-set.tsx';
import { TYPE_LABELS } from './question-editor.tsx';
import { ScoreScale } from './score-scale.tsx';

function Confidence({ value, formula }: { value: number; formula: string }) {
  return (
    <p class="confidence" title={formula}>
      <span>Confidence</span>
      <meter min={0} max={1} low={0.34} high={0.67} optimum={1} value={value} aria-label="Confidence" />
      <span data-testid="confidence">{formatPercent(value)}</span>
    </p>
  );
}

function headline(answer: Answer): string {
  switch (answer.type) {
    case 'noul':
      return `${answer.noul >= 0.5 ? 'true' : 'false'} · ${formatPercent(Math.max(answer.noul, 1 - answer.noul))}`;
    case 'choice':
      return answer.choice;
    case 'score':
      return `${answer.score.toFixed(2)} of ${Math.max(0, Object.keys(answer.legend).length - 1)}`;
    default: {
      const never: never = answer;
      return String(never);
    }
  }
}

function barsOf(answer: Answer): Bar[] {
  switch (answer.type) {
    case 'noul':
      return [
        { key: 'true', label: 'true', p: answer.noul },
        { key: 'false', label: 'false', p: 1 - answer.noul },
      ];
    case 'choice':
      return Object.entries(answer.probabilities).map(([key, p]) => ({ key, label: key, p }));
    case 'score':
      return Object.entries(answer.probabilities)
        .sort(([a], [b]) => Number(a) - Number(b))
        .map(([key, p]) => ({ key, label: `${key} · ${answer.legend[key] ?? ''}`, p }));
    default: {
      const never: never = answer;
      return never;
    }
  }
}

function chosenOf(answer: Answer): string | null {
  if (answer.type === 'noul') return answer.noul >= 0.5 ? 'true' : 'false';
  if (answer.type === 'choice') return answer.choice;
  const best = Object.entries(answer.probabilities).sort(([, a], [, b]) => b - a)[0];
  return best ? best[0] : null;
}

/**
 * One answer: the outcome in words, the probability of every option, the confidence and what it
 * measures, the prediction set when the request asked for one (at miscoverage `alpha`), and the
 * prompt the model read, collapsed, when the request asked for it.
 */
export function AnswerCard({ questionKey, answer, alpha = null }: { questionKey: string; answer: Answer; alpha?: number | null }) {
  return (
    <article class="answer-card" aria-label={`Answer ${questionKey}`} data-testid="answer" data-key={questionKey} data-type={answer.type}>
      <header>
        <h4 class="mono">{questionKey}</h4>
        <span class="badge">{TYPE_LABELS[answer.type]}</span>
        <span class="answer-headline" data-testid="answer-headline">
          {headline(answer)}
        </span>
      </header>
      {answer.type === 'score' && <ScoreScale score={answer.score} legend={answer.legend} />}
      <ProbabilityBars bars={barsOf(answer)} chosen={chosenOf(answer)} caption={`Probabilities for ${questionKey}`} />
      {answer.type !== 'noul' && <Confidence value={answer.confidence} formula={confidenceFormula(answer.type)} />}
      {answer.answer_mass !== undefined && <ConfidenceNote type={answer.type} answerMass={answer.answer_mass} />}
      <PredictionSet answer={answer} alpha={alpha} />
      {answer.prompt && <AnswerPromptDetails prompt={answer.prompt} />}
    </article>
  );
}
