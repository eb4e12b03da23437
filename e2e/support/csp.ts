import type { Page } from '@playwright/test';
import { MIRROR } from './env.ts';

/** The Content-Security-Policy docs/offline.md recommends, with the model host as the only other origin. */
export const STRICT_CSP = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "worker-src 'self'",
  `connect-src 'self' ${MIRROR}`,
  "img-src 'self' data:",
  "style-src 'self'",
  "manifest-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Collects Content-Security-Policy violations on a page from both sides: what the browser logs
 * to the console and the `securitypolicyviolation` events the page sees. Call before `goto`; the
 * returned function gives every violation so far.
 */
export async function watchViolations(page: Page): Promise<() => Promise<string[]>> {
  const logged: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) logged.push(m.text());
  });
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      (window as any).violations = [...((window as any).violations ?? []), `${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`];
    });
  });
  return async () => [...logged, ...(await page.evaluate(() => ((window as any).violations ?? []) as string[]))];
}
