import { BUNDLED_MODEL } from './bundled-model.ts';

/** Reasons that say the model's host gave no usable answer (load-failure.ts). */
const UNREACHABLE = new Set(['host_unreachable', 'cors_refused', 'csp_refused', 'host_error', 'download_failed']);

function hostName(host: string): string {
  try {
    return new URL(host).host;
  } catch {
    return host;
  }
}

/**
 * Shown when a model from elsewhere failed to load: the model the app serves itself, in one click.
 * Where the host could not be reached it says so first.
 */
export function BundledOffer({ host, reason, onLoad }: { host: string; reason: string | null; onLoad: () => void }) {
  return (
    <div class="facts-box bundled-offer" data-testid="bundled-offer">
      <p class="small-text">
        {reason && UNREACHABLE.has(reason) ? (
          <>
            <strong>{hostName(host)}</strong> cannot be reached from here.{' '}
          </>
        ) : null}
        This app ships a small model that needs no download: {BUNDLED_MODEL.label} ({BUNDLED_MODEL.parameters} parameters). It writes short stories and follows no
        instructions, but it shows the page at work.
      </p>
      <button type="button" class="button" onClick={onLoad}>
        Load the bundled {BUNDLED_MODEL.label}
      </button>
    </div>
  );
}
