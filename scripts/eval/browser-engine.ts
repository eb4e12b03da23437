/**
 * The engine the CLI evaluates: the built playground in headless Chromium, served cross-origin
 * isolated (e2e/support/static-server.ts), its model from `--host` or from a local server over
 * the repository's model folders in the hub layout (e2e/support/model-host.ts). Decisions go
 * through the page's own client, `window.jev.decisions.create`: the same facade, worker and
 * engine code as the playground, the library and the HTTP surface; extractions likewise through
 * `window.jev.extractions.create`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from '@playwright/test';
import type { DecisionRequestInput, DecisionResponse } from '../../src/contract/index.ts';
import type { ExtractionRequestInput } from '../../src/contract/extraction-request.ts';
import type { ExtractionResponse } from '../../src/contract/extraction-response.ts';
import type { JevClient } from '../../src/facade/jev-client.ts';
import type { EngineStatus } from '../../src/protocol/engine-api.ts';
import { CHROMIUM_ARGS, chromiumPath } from '../machine/chromium.ts';
import { startModelHost, type ModelHost } from '../../e2e/support/model-host.ts';
import { startStatic } from '../../e2e/support/static-server.ts';
import { MODEL_ROOTS } from '../models/roots.ts';

export interface BrowserEngineOptions {
  /** The built playground's folder. */
  app: string;
  port: number;
  model: string;
  /** null: serve the repository's model folders locally. */
  host: string | null;
  device: string;
  dtype: string;
  loadTimeoutMs: number;
  log: (line: string) => void;
}

export interface BrowserEngine {
  status: EngineStatus;
  decide(request: DecisionRequestInput, options: { signal?: AbortSignal }): Promise<DecisionResponse>;
  /** `window.jev.extractions.create`; refused where the page's client has none. */
  extract(request: ExtractionRequestInput, options: { signal?: AbortSignal }): Promise<ExtractionResponse>;
  close(): Promise<void>;
}

/** A model that did not load: its own exit code and message. */
export class ModelLoadError extends Error {
  override readonly name = 'ModelLoadError';
}

type JevWindow = { jev: JevClient };
type ExtractingWindow = { jev: { extractions?: { create(r: ExtractionRequestInput): Promise<ExtractionResponse> } } };

export async function openBrowserEngine(options: BrowserEngineOptions): Promise<BrowserEngine> {
  const closers: (() => Promise<unknown>)[] = [];
  const close = async () => {
    for (const c of closers.reverse()) await c().catch(() => undefined);
  };
  try {
    let host = options.host;
    if (host === null) {
      checkLocalModel(options.model);
      const mirror: ModelHost = await startModelHost(MODEL_ROOTS, 0);
      closers.push(() => mirror.close());
      host = mirror.url;
    }
    const server = await startStatic(options.app, options.port);
    closers.push(() => server.close());
    const browser: Browser = await chromium.launch({ executablePath: chromiumPath(), headless: true, args: CHROMIUM_ARGS, handleSIGINT: false });
    closers.push(() => browser.close());
    const page: Page = await browser.newPage();
    page.setDefaultTimeout(0);
    page.on('pageerror', (e) => options.log(`page error: ${e.message}`));
    const query = new URLSearchParams({ model: options.model, host, device: options.device, dtype: options.dtype });
    const url = `${server.url}/?${query}`;
    options.log(`loading ${options.model} from ${host} on ${options.device} (${url})`);
    await page.goto(url);
    await page.waitForFunction(() => !!(window as unknown as Partial<JevWindow>).jev);
    const status = await withTimeout(
      page.evaluate(() => (window as unknown as JevWindow).jev.ready),
      options.loadTimeoutMs,
      `the model did not load within ${options.loadTimeoutMs / 1000} s`,
    ).catch((e: unknown) => {
      throw new ModelLoadError(`model "${options.model}" failed to load: ${pageMessage(e)}`);
    });
    return {
      status,
      decide: async (request, { signal }) => {
        signal?.throwIfAborted();
        try {
          return await page.evaluate((r) => (window as unknown as JevWindow).jev.decisions.create(r), request);
        } catch (e) {
          signal?.throwIfAborted();
          throw new Error(pageMessage(e));
        }
      },
      extract: async (request, { signal }) => {
        signal?.throwIfAborted();
        try {
          return await page.evaluate((r) => {
            const extractions = (window as unknown as ExtractingWindow).jev.extractions;
            if (!extractions) throw new Error("this build's client has no extractions.create");
            return extractions.create(r);
          }, request);
        } catch (e) {
          signal?.throwIfAborted();
          throw new Error(pageMessage(e));
        }
      },
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}

/** Throws ModelLoadError unless `model` is in one of the repository's model folders. */
export function checkLocalModel(model: string): void {
  if (!MODEL_ROOTS.some((root) => existsSync(join(root, model, 'config.json')))) {
    throw new ModelLoadError(`model "${model}" is in none of ${MODEL_ROOTS.join(', ')}; generate it (npm run models) or give --host URL`);
  }
}

/** An error thrown in the page, without Playwright's "page.evaluate: Error: " framing. */
function pageMessage(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  return message.replace(/^page\.evaluate: /, '').replace(/^\w*Error: /, '').split('\n')[0]!;
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
