import { useEffect, useState } from 'preact/hooks';
import type { JevClient } from '../facade/jev-client.ts';
import type { EngineStatus } from '../protocol/engine-api.ts';
import type { LoadProgress } from './load-progress.ts';
import { DecisionPanel } from './decision-panel.tsx';
import { ProgressList } from './progress-list.tsx';
import './app.css';

export interface AppProps {
  client: JevClient;
  params: { model: string; host: string; device: string; dtype: string };
  progress: LoadProgress;
}

export function App({ client, params, progress }: AppProps) {
  const [status, setStatus] = useState<EngineStatus | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  useEffect(() => {
    client.ready.then(setStatus, (e: Error) => setLoadError(e.message));
  }, [client]);

  return (
    <main>
      <header>
        <h1>Jev local</h1>
        <p class="tagline">Decisions and chat from a language model running in this tab. Nothing you type leaves the device.</p>
      </header>
      <section aria-labelledby="model-h" class="panel">
        <h2 id="model-h">Model</h2>
        <p data-testid="engine-status" data-state={status ? 'ready' : loadError ? 'failed' : 'loading'}>
          {status
            ? `Ready: ${status.model} (${status.dtype}) on ${status.device}, ${status.contextLength} tokens of context.`
            : loadError
              ? `Loading ${params.model} failed: ${loadError}`
              : `Loading ${params.model} from ${params.host}…`}
        </p>
        <ProgressList progress={progress} />
      </section>
      <DecisionPanel client={client} />
    </main>
  );
}
