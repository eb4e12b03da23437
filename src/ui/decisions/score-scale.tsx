/** The score placed on its legend: grade labels along a line, a marker where the score falls. */
export function ScoreScale({ score, legend }: { score: number; legend: Record<string, string> }) {
  const labels = Object.keys(legend)
    .map(Number)
    .sort((a, b) => a - b)
    .map((i) => legend[String(i)] ?? String(i));
  const top = Math.max(1, labels.length - 1);
  const at = Math.max(0, Math.min(1, score / top));
  const below = Math.min(labels.length - 1, Math.floor(score));
  const above = Math.min(labels.length - 1, Math.ceil(score));
  const where = below === above ? `at ${labels[below]}` : `between ${labels[below]} and ${labels[above]}`;
  const description = `Score ${score.toFixed(2)} on a scale from 0 (${labels[0]}) to ${top} (${labels[top]}), ${where}.`;
  return (
    <figure class="scale" data-testid="score-scale" data-score={String(score)}>
      <div class="scale-track" role="img" aria-label={description}>
        {labels.map((_, i) => (
          <span class="scale-tick" key={i} style={{ left: `${(i / top) * 100}%` }} aria-hidden="true" />
        ))}
        <span class="scale-marker" style={{ left: `${at * 100}%` }} aria-hidden="true">
          <span class="scale-marker-value">{score.toFixed(2)}</span>
        </span>
      </div>
      <ol class="scale-labels" aria-hidden="true">
        {labels.map((l, i) => (
          <li key={i} style={{ left: `${(i / top) * 100}%` }} class={i === 0 ? 'first' : i === top ? 'last' : ''}>
            <span class="scale-index">{i}</span> {l}
          </li>
        ))}
      </ol>
      <figcaption class="visually-hidden">{description}</figcaption>
    </figure>
  );
}
