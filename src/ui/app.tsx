import type { Signal } from '@preact/signals';
import { useEffect, useState } from 'preact/hooks';
import type { JevClient } from '../facade/jev-client.ts';
import { ChatPanel } from './chat/chat-panel.tsx';
import type { ChatStore } from './chat/chat-store.ts';
import { DecisionPanel } from './decisions/decision-panel.tsx';
import { EvalPanel } from './evaluation/eval-panel.tsx';
import { createExtractDraft } from './extract/extract-draft.ts';
import { ExtractPanel } from './extract/extract-panel.tsx';
import { ModelPanel } from './model/model-panel.tsx';
import { probeWebGpu, type WebGpuSupport } from './model/webgpu-probe.ts';
import { EngineBadge } from './shared/engine-badge.tsx';
import { Tabs } from './shared/tabs.tsx';
import { UpdateBanner } from './shared/update-banner.tsx';
import type { DecisionDraft } from './state/decision-draft.ts';
import type { EngineState } from './state/engine-state.ts';
import type { LoadProgress } from './state/load-progress.ts';
import type { SavedProfiles } from './state/saved-profiles.ts';
import './app.css';

export interface AppProps {
  client: JevClient;
  engine: EngineState;
  progress: LoadProgress;
  decision: DecisionDraft;
  chat: ChatStore;
  /** Saved calibration profiles (the evaluation saves them; the decision form applies them). */
  profiles: SavedProfiles;
  /** Set when a new version of the page waits; calling it switches. */
  update: Signal<(() => void) | null>;
}

/** The playground: the model on one side; decisions, chat and extraction on the other. */
export function App({ client, engine, progress, decision, chat, profiles, update }: AppProps) {
  const [webgpu, setWebgpu] = useState<WebGpuSupport | null>(null);
  // The Extract tab's draft (localStorage-backed), made once for the page's life.
  const [extract] = useState(createExtractDraft);
  useEffect(() => {
    probeWebGpu().then(setWebgpu, () => setWebgpu({ kind: 'no-adapter' }));
  }, []);

  return (
    <>
      <a class="skip-link" href="#workspace">
        Skip to decisions and chat
      </a>
      <UpdateBanner update={update} />
      <header class="site-header">
        <div class="brand">
          <span class="logo" aria-hidden="true">
            J
          </span>
          <div>
            <h1>Jev local</h1>
            <p class="tagline">Decisions and chat from a language model running in this tab. Nothing you type leaves the device.</p>
          </div>
        </div>
        <EngineBadge engine={engine} progress={progress} />
      </header>
      <div class="layout">
        <aside class="sidebar">
          <ModelPanel client={client} engine={engine} progress={progress} webgpu={webgpu} />
        </aside>
        <main id="workspace" class="workspace" tabIndex={-1}>
          <Tabs
            label="Playground"
            tabs={[
              {
                id: 'decisions',
                label: 'Decisions',
                content: (
                  <>
                    <DecisionPanel client={client} draft={decision} profiles={profiles} />
                    <EvalPanel client={client} draft={decision} profiles={profiles} />
                  </>
                ),
              },
              { id: 'chat', label: 'Chat', content: <ChatPanel client={client} store={chat} /> },
              { id: 'extract', label: 'Extract', content: <ExtractPanel client={client} draft={extract} /> },
            ]}
          />
        </main>
      </div>
    </>
  );
}
