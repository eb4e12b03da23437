import type { Signal } from '@preact/signals';

/** Says that a new version of the page is installed, and switches to it when asked. */
export function UpdateBanner({ update }: { update: Signal<(() => void) | null> }) {
  const apply = update.value;
  if (!apply) return null;
  return (
    <div class="update-banner" role="status">
      <span>A new version of the playground is ready.</span>
      <button type="button" class="button small primary" onClick={apply}>
        Reload to update
      </button>
    </div>
  );
}
