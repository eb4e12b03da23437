import type { AnswerPrompt } from '../../contract/index.ts';

/**
 * What the model read for one question (`include: ["prompt"]`), collapsed: the prompt text as
 * decoded from the token ids fed, and the token ids of each answer's label as scored.
 */
export function AnswerPromptDetails({ prompt }: { prompt: AnswerPrompt }) {
  return (
    <details class="answer-prompt" data-testid="answer-prompt">
      <summary>Prompt the model read</summary>
      <pre class="mono" data-testid="answer-prompt-text">{prompt.text}</pre>
      <table class="label-ids">
        <caption>Label token ids, as scored after the prompt</caption>
        <thead>
          <tr>
            <th scope="col">Answer</th>
            <th scope="col">Token ids</th>
          </tr>
        </thead>
        <tbody>
          {Object.entries(prompt.label_token_ids).map(([answer, paths]) => (
            <tr key={answer} data-testid="label-ids" data-answer={answer}>
              <th scope="row" class="mono">{JSON.stringify(answer)}</th>
              <td class="mono">{paths.map((p) => `[${p.join(', ')}]`).join(' or ')}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}
