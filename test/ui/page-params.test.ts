import { describe, expect, it } from 'vitest';
import { bundledHost, isBundled } from '../../src/ui/model/bundled-model.ts';
import { pageParams, withParams } from '../../src/ui/model/page-params.ts';

const PAGE = 'http://127.0.0.1:4173/?model=x';

describe('page parameters and the bundled model', () => {
  it('reads a relative host against the page: host=bundled is the app\'s own copy', () => {
    const p = pageParams('?model=TinyStories-656K&host=bundled', PAGE);
    expect(p.host).toBe('http://127.0.0.1:4173/bundled');
    expect(p.host).toBe(bundledHost(PAGE));
    expect(isBundled(p, PAGE)).toBe(true);
    expect(pageParams('?host=/mirror/', 'http://a.test/app/index.html').host).toBe('http://a.test/mirror');
    // Absolute hosts are left as they are.
    expect(pageParams('?host=http://127.0.0.1:9/', PAGE).host).toBe('http://127.0.0.1:9');
    expect(pageParams('', PAGE).host).toBe('https://huggingface.co');
  });

  it('writes the host of a load into the address: bundled as host=bundled, the default as none', () => {
    const bundled = withParams(PAGE, { model: 'TinyStories-656K', host: bundledHost(PAGE), device: 'auto', dtype: 'auto' });
    expect(new URL(bundled).searchParams.get('host')).toBe('bundled');
    const hub = withParams(`${PAGE}&host=bundled`, { model: 'HuggingFaceTB/SmolLM2-135M-Instruct', host: 'https://huggingface.co', device: 'wasm', dtype: 'q4' });
    expect(new URL(hub).searchParams.has('host')).toBe(false);
    expect(new URL(hub).searchParams.get('device')).toBe('wasm');
    // Without a host, the address's stays.
    expect(new URL(withParams(`${PAGE}&host=http%3A%2F%2Fm.test`, { model: 'm', device: 'auto', dtype: 'auto' })).searchParams.get('host')).toBe('http://m.test');
  });

  it('reads ortBuild=cpu|jspi|asyncify (any case); auto, other values or none leave the default', () => {
    expect(pageParams('?model=m&ortBuild=jspi', PAGE).ortBuild).toBe('jspi');
    expect(pageParams('?ortBuild=ASYNCIFY', PAGE).ortBuild).toBe('asyncify');
    expect(pageParams('?ortBuild=cpu', PAGE).ortBuild).toBe('cpu');
    for (const q of ['', '?ortBuild=', '?ortBuild=auto', '?ortBuild=plain', '?ortbuild=jspi']) expect(pageParams(q, PAGE), q).not.toHaveProperty('ortBuild');
    // The contract's four are read as before beside it.
    expect(pageParams('?model=m&device=wasm&dtype=q8&ortBuild=jspi', PAGE)).toMatchObject({ model: 'm', device: 'wasm', dtype: 'q8', ortBuild: 'jspi' });
    // A load's parameters written into the address keep it.
    expect(new URL(withParams(`${PAGE}&ortBuild=asyncify`, { model: 'm', device: 'auto', dtype: 'auto' })).searchParams.get('ortBuild')).toBe('asyncify');
  });

  it('reads threads=N (1–256) for the wasm threads; anything else leaves the default', () => {
    expect(pageParams('?model=m&threads=1', PAGE).threads).toBe(1);
    expect(pageParams('?threads=256', PAGE).threads).toBe(256);
    for (const q of ['', '?threads=', '?threads=0', '?threads=257', '?threads=1.5', '?threads=-2', '?threads=two']) expect(pageParams(q, PAGE), q).not.toHaveProperty('threads');
  });
});
