/**
 * The engine's renderer right after a load, over several loads (docs/memory.md):
 *
 *   npx tsx bench/peers/load-memory.ts [--model smollm2-135m-random] [--dtype fp32] [--threads 2] [--loads 6] [--no-build]
 *
 * Each load runs in a fresh peers page, as the peer rows' engine side does (bench/peers/page).
 * Printed per load: whether the load's collection prompt saw the released file buffers collected
 * (`SessionRewriteReport.collected`, src/engine/load/collection-prompt.ts), and the renderer's
 * resident set at the load's end and every half second for 3 s after it (MiB). A file buffer not
 * collected shows as the file's size more, kept until something else starts a full collection.
 */
import { parseArgs } from 'node:util';
import { grownRenderer, rendererRss } from '../../scripts/machine/procs.ts';
import { mib } from '../lib/measure.ts';
import { launchChromium, openPeersPage } from './browser.ts';
import { sleep } from './quiet.ts';

const { values } = parseArgs({
  options: {
    model: { type: 'string', default: 'smollm2-135m-random' },
    dtype: { type: 'string', default: 'fp32' },
    threads: { type: 'string', default: '2' },
    loads: { type: 'string', default: '6' },
    'no-build': { type: 'boolean', default: false },
  },
});

const marker = `load-memory-${process.pid}-${Date.now()}`;
const browser = await launchChromium(marker);
let collected = 0;
try {
  const loads = Number(values.loads);
  for (let i = 0; i < loads; i++) {
    const session = await openPeersPage(browser, { build: i === 0 && !values['no-build'] });
    try {
      const before = rendererRss(marker);
      await session.call('engineStart', 'load-memory');
      const load = (await session.call('engineCall', 'load-memory', 'load' as never, {
        model: values.model,
        dtype: values.dtype,
        threads: Number(values.threads),
      } as never)) as { rewrites: { collected: boolean | null } };
      const pid = grownRenderer(marker, before);
      if (pid === null) throw new Error('the page that loaded has no renderer of its own');
      const rss = [mib(rendererRss(marker).get(pid) ?? null)];
      for (let t = 0; t < 6; t++) {
        await sleep(500);
        rss.push(mib(rendererRss(marker).get(pid) ?? null));
      }
      if (load.rewrites.collected) collected++;
      console.log(`load ${i + 1}/${loads}: file buffers collected ${load.rewrites.collected}; renderer ${rss.join(', ')}`);
    } finally {
      await session.close();
    }
  }
  console.log(`${values.model} ${values.dtype} ×${values.threads}: collected after ${collected} of ${loads} loads`);
} finally {
  await browser.close();
}
