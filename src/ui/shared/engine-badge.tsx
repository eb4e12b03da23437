import type { EngineState } from '../state/engine-state.ts';
import type { LoadProgress } from '../state/load-progress.ts';

/** The engine's state in a word, at the top of the page; it leads to the model panel. */
export function EngineBadge({ engine, progress }: { engine: EngineState; progress: LoadProgress }) {
  const state = engine.current.value;
  const { loaded, total } = progress.totals.value;
  const text =
    state.phase === 'ready'
      ? `${state.status.model ?? state.target.model} · ${state.status.device}`
      : state.phase === 'loading'
        ? `Loading${total > 0 ? ` ${Math.floor((loaded / total) * 100)}%` : '…'}`
        : 'Model failed to load';
  return (
    <a class={`engine-badge ${state.phase}`} href="#model-h" aria-label={`Model: ${text}. Go to the model settings.`}>
      <span class="dot" aria-hidden="true" />
      {text}
    </a>
  );
}
