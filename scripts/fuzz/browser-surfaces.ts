/**
 * The fuzz campaign in Chromium: the built playground (dist-eval, as `npm run eval` builds it) on
 * the generated tiny-random-llama, served cross-origin isolated from a local server, with the
 * reliability harness added to the page (e2e/reliability-support.ts). The campaign runs in the page
 * against the worker facade (`window.jev`) and the real service worker (`fetch` on the page's
 * origin); a crash of the page fails it.
 */
import { chromium } from '@playwright/test';
import { CHROMIUM_ARGS, chromiumPath } from '../machine/chromium.ts';
import { startModelHost } from '../../e2e/support/model-host.ts';
import { startStatic } from '../../e2e/support/static-server.ts';
import { buildHarness } from '../../e2e/reliability-support.ts';
import type { CampaignReport } from '../../test/fuzz/campaign.ts';
import type { Endpoint } from '../../test/fuzz/arbitraries.ts';
import { appFolder } from '../eval/app-build.ts';
import { MODEL_ROOTS } from '../models/roots.ts';

export interface BrowserCampaign {
  run(o: { endpoint: Endpoint; runs: number; seed: number; path?: string | undefined; shrink: boolean }): Promise<CampaignReport>;
  close(): Promise<void>;
}

export async function openBrowserCampaign(model: string, log: (line: string) => void): Promise<BrowserCampaign> {
  const app = await appFolder(null, log);
  const mirror = await startModelHost(MODEL_ROOTS, 0);
  const server = await startStatic(app, 0);
  const browser = await chromium.launch({ executablePath: chromiumPath(), headless: true, args: CHROMIUM_ARGS });
  const page = await browser.newPage();
  page.setDefaultTimeout(0);
  let crashed: string | null = null;
  page.on('crash', () => (crashed = 'the page crashed'));
  page.on('pageerror', (e) => (crashed ??= `uncaught in the page: ${e.message}`));
  const query = new URLSearchParams({ model, host: mirror.url, device: 'wasm', dtype: 'fp32' });
  await page.goto(`${server.url}/?${query}`);
  await page.evaluate('window.jev.ready');
  await page.waitForFunction('!!navigator.serviceWorker.controller');
  await page.addScriptTag({ path: await buildHarness() });
  return {
    async run({ endpoint, runs, seed, path, shrink }) {
      // Sent as text: tsx names functions with a helper (`__name`) the page does not have.
      const result = (await page.evaluate(`(async (o) => {
        const R = window.jevReliability;
        const jev = window.jev;
        const surfaces = {
          facade: R.fuzz.facadeOf(jev),
          fetch: (p, init) => fetch(p, init),
        };
        try {
          return await R.fuzz.runCampaign(surfaces, { ...o, probe: R.fuzz.PROBES[o.endpoint] });
        } catch (e) {
          return { failure: String((e && e.message) || e) };
        }
      })(${JSON.stringify({ endpoint, runs, seed, path, shrink })})`)) as CampaignReport | { failure: string };
      if (crashed) throw new Error(crashed);
      if ('failure' in result) throw new Error(result.failure);
      return result;
    },
    async close() {
      await browser.close().catch(() => undefined);
      await server.close().catch(() => undefined);
      await mirror.close().catch(() => undefined);
    },
  };
}
