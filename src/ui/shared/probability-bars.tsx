import { formatPercent } from './format.ts';

export interface Bar {
  key: string;
  label: string;
  p: number;
}

/** One bar per option, its probability in numbers beside it; the chosen one stands out. */
export function ProbabilityBars({ bars, chosen, caption }: { bars: readonly Bar[]; chosen: string | null; caption: string }) {
  return (
    <ul class="bars" aria-label={caption} data-testid="probability-bars">
      {bars.map((b) => (
        <li key={b.key} class={b.key === chosen ? 'bar chosen' : 'bar'} data-testid="probability" data-key={b.key} data-value={String(b.p)}>
          <span class="bar-label" title={b.label}>
            {b.label}
            {b.key === chosen && <span class="visually-hidden"> (chosen)</span>}
          </span>
          <span class="bar-track" aria-hidden="true">
            <span class="bar-fill" style={{ width: `${Math.max(0, Math.min(1, b.p)) * 100}%` }} />
          </span>
          <span class="bar-value" data-testid="probability-value">
            {formatPercent(b.p)}
          </span>
        </li>
      ))}
    </ul>
  );
}
