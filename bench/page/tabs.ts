/**
 * A bench tab: the library's client as an app would make it, from the query (`model`, `host`,
 * `dtype`, `share`), exposed as `window.jevTab`. Several of these, in one browser profile, are the
 * `tabs` rows (bench/lib/tabs-rows.ts).
 */
import { createClient } from '../../src/client/create-client.ts';

const q = new URLSearchParams(location.search);
const share = q.get('share') === 'tab' ? 'tab' : 'origin';
(window as unknown as { jevTab: unknown }).jevTab = createClient({
  model: q.get('model') ?? undefined,
  host: q.get('host') ?? undefined,
  device: 'wasm',
  dtype: (q.get('dtype') as 'fp32' | null) ?? 'fp32',
  ortBase: new URL('/ort/', location.origin).href,
  share,
});
