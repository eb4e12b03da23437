import { describe, expect, it } from 'vitest';
import { ISOLATION_HEADERS, withIsolationHeaders } from '../../src/http/isolation.ts';

describe('withIsolationHeaders', () => {
  it('adds COOP and COEP and keeps status, other headers and body', async () => {
    const original = new Response('<!doctype html><p>shell', { status: 200, statusText: 'OK', headers: { 'Content-Type': 'text/html', ETag: '"x"' } });
    const out = withIsolationHeaders(original);
    expect(out.headers.get('Cross-Origin-Opener-Policy')).toBe('same-origin');
    expect(out.headers.get('Cross-Origin-Embedder-Policy')).toBe('require-corp');
    expect(out.headers.get('Content-Type')).toBe('text/html');
    expect(out.headers.get('ETag')).toBe('"x"');
    expect(out.status).toBe(200);
    expect(await out.text()).toBe('<!doctype html><p>shell');
  });

  it('overrides weaker values, and returns a response that already has both unchanged', () => {
    const weak = new Response('', { headers: { 'Cross-Origin-Opener-Policy': 'unsafe-none' } });
    expect(withIsolationHeaders(weak).headers.get('Cross-Origin-Opener-Policy')).toBe('same-origin');
    const isolated = new Response('', { headers: ISOLATION_HEADERS });
    expect(withIsolationHeaders(isolated)).toBe(isolated);
  });
});
