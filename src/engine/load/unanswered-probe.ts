/**
 * Why a fetch got no answer, as far as a browser lets a page know. A fetch that fails before an
 * answer throws a bare `TypeError` whether the host cannot be reached, its answer lacks CORS
 * headers, or the page's Content-Security-Policy stopped the request. They are told apart by
 * asking again in `no-cors` mode (it resolves when the host answers) and, on a
 * cross-origin-isolated page (where COEP blocks that answer too), by the reports the browser files:
 * a `coep` report naming the URL means an answer arrived and was blocked (only an answer produces
 * one); a `csp-violation` report means the request never left. Measured in Chromium: in the page
 * and in a dedicated worker alike, a closed port files no report, a server without CORS a `coep`
 * one, a host outside `connect-src` a `csp-violation` one.
 */

/** What a request that got no answer ran into, as far as the browser lets a page know. */
export type Unanswered = 'unreachable' | 'cors' | 'csp';

/** Asks again how a fetch of `url` fails, once it threw before any answer could be read. */
export type Probe = (url: string) => Promise<Unanswered>;

/**
 * The browser's own probe: a `no-cors` fetch of the same URL resolves when the host answers
 * (CORS hid that answer); on a cross-origin-isolated page COEP blocks it as well, but files a
 * `coep` report naming the URL, which only an answer produces. A `csp-violation` report naming
 * the URL means the page's policy stopped the request before it left.
 */
export async function probeUnanswered(url: string): Promise<Unanswered> {
  const reports = watchReports();
  try {
    await fetch(url, { mode: 'no-cors', cache: 'no-store', credentials: 'omit' });
    return 'cors';
  } catch {
    return (await reports?.about(url, 600)) ?? 'unreachable';
  } finally {
    reports?.stop();
  }
}

interface ReportLike {
  type: string;
  body?: { blockedURL?: string; blockedURI?: string; type?: string } | null;
}

function watchReports(): { about(url: string, waitMs: number): Promise<Unanswered | null>; stop(): void } | null {
  const Observer = (globalThis as { ReportingObserver?: new (cb: (reports: ReportLike[]) => void, options: object) => { observe(): void; disconnect(): void; takeRecords(): ReportLike[] } }).ReportingObserver;
  if (!Observer) return null;
  const seen: ReportLike[] = [];
  let wake: (() => void) | null = null;
  const observer = new Observer(
    (reports) => {
      seen.push(...reports);
      wake?.();
    },
    { types: ['coep', 'csp-violation'], buffered: true },
  );
  observer.observe();
  const verdict = (url: string): Unanswered | null => {
    for (const r of seen) {
      // A COEP report's body shows its fields only through toJSON() (Chromium's generic ReportBody).
      const body = (r.body as { toJSON?: () => ReportLike['body'] } | null | undefined)?.toJSON?.() ?? r.body;
      const blocked = body?.blockedURL ?? body?.blockedURI;
      if (blocked !== url && !(blocked && url.startsWith(blocked))) continue;
      if (r.type === 'csp-violation') return 'csp';
      if (r.type === 'coep') return 'cors';
    }
    return null;
  };
  return {
    async about(url, waitMs) {
      const deadline = Date.now() + waitMs;
      for (;;) {
        seen.push(...observer.takeRecords());
        const found = verdict(url);
        if (found || Date.now() >= deadline) return found;
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, Math.min(50, Math.max(0, deadline - Date.now())));
        });
        wake = null;
      }
    },
    stop: () => observer.disconnect(),
  };
}
