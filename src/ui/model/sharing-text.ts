import type { SharingStatus } from '../../protocol/engine-api.ts';

/** What the Model panel says of `status().sharing` (docs/sharing.md); null sharing: this tab's own engine. */
export function sharingText(sharing: SharingStatus | null): string {
  if (!sharing) return "This tab runs its own engine: it is not shared with other tabs (share: 'tab').";
  const others = sharing.tabs - 1;
  const served = others === 0 ? 'no other tab uses it yet' : `${others} other tab${others === 1 ? ' uses' : 's use'} it`;
  if (sharing.hosting) return `This tab hosts the engine; ${served}. Closing this tab hands the engine to another.`;
  return `Served by the engine of another tab (${sharing.host}); ${sharing.tabs} tab${sharing.tabs === 1 ? '' : 's'} share it. This tab holds no copy of the model.`;
}
