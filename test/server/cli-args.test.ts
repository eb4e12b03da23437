import { describe, expect, it } from 'vitest';
import { defaultCacheDir, parseServeArgs, SERVE_DEFAULTS, UsageError } from '../../src/server/cli-args.ts';
import { main } from '../../src/server/main.ts';

describe('jev-local serve arguments', () => {
  it('reads the contract\'s flags, with defaults for the optional ones', () => {
    const o = parseServeArgs(['--backend', 'sglang', '--backend-url', 'http://gpu:30000/', '--model', 'Qwen/Qwen3-0.6B']);
    expect(o).toEqual({
      backend: 'sglang',
      backendUrl: 'http://gpu:30000',
      model: 'Qwen/Qwen3-0.6B',
      host: null,
      backendModel: 'Qwen/Qwen3-0.6B',
      port: SERVE_DEFAULTS.port,
      bind: '127.0.0.1',
      apiKey: undefined,
      timeoutMs: SERVE_DEFAULTS.timeoutMs,
      device: 'cpu',
      threads: null,
      dtype: 'auto',
      cacheDir: defaultCacheDir(),
      allowedHosts: [],
      corsOrigins: [],
      maxConnections: SERVE_DEFAULTS.maxConnections,
      maxQueued: SERVE_DEFAULTS.maxQueued,
    });
    const all = parseServeArgs(['--backend=vllm', '--backend-url=http://v:8000', '--model=m', '--host', 'file:///models', '--port', '9000', '--bind', '0.0.0.0', '--api-key', 'k', '--timeout-ms', '5000', '--backend-model', 'served']);
    expect(all).toMatchObject({ backend: 'vllm', host: 'file:///models', port: 9000, bind: '0.0.0.0', apiKey: 'k', timeoutMs: 5000, backendModel: 'served' });
  });

  it('runs the engine in-process without --backend, with the server flags', () => {
    expect(parseServeArgs(['--model', 'TinyStories-656K'])).toMatchObject({ backend: null, backendUrl: null, model: 'TinyStories-656K', host: null, device: 'cpu', threads: null, dtype: 'auto' });
    const o = parseServeArgs([
      '--model=m', '--host', 'http://mirror:8000', '--device', 'cuda', '--threads', '3', '--dtype', 'q8', '--cache-dir', '/tmp/c',
      '--allowed-host', 'box.lan', '--allowed-host=a.example,B.example', '--cors-origin', 'https://app.example/', '--cors-origin', '*',
      '--max-connections', '10', '--max-queued', '0',
    ]);
    expect(o).toMatchObject({
      backend: null, host: 'http://mirror:8000', device: 'cuda', threads: 3, dtype: 'q8', cacheDir: '/tmp/c',
      allowedHosts: ['box.lan', 'a.example', 'b.example'], corsOrigins: ['https://app.example', '*'], maxConnections: 10, maxQueued: 0,
    });
    expect(defaultCacheDir({ XDG_CACHE_HOME: '/x/cache' })).toBe('/x/cache/jev-local');
  });

  it('refuses what it cannot run, naming the flag', () => {
    const base = ['--backend-url', 'http://x', '--model', 'm'];
    expect(() => parseServeArgs(base)).toThrow(/--backend is required/);
    expect(() => parseServeArgs(['--backend', 'tgi', ...base])).toThrow(/sglang or vllm/);
    expect(() => parseServeArgs(['--backend', 'vllm', '--backend-url', 'gpu:8000', '--model', 'm'])).toThrow(/http\(s\) URL/);
    expect(() => parseServeArgs(['--backend', 'vllm', ...base, '--port', '70000'])).toThrow(/--port/);
    expect(() => parseServeArgs(['--backend', 'vllm', ...base, '--timeout-ms'])).toThrow(/needs a value/);
    expect(() => parseServeArgs(['--backend', 'vllm', ...base, '--gpu'])).toThrow(UsageError);
    expect(() => parseServeArgs(['--model', 'm', '--device', 'webgpu'])).toThrow(/--device must be cpu or cuda/);
    expect(() => parseServeArgs(['--model', 'm', '--dtype', 'int3'])).toThrow(/--dtype must be one of/);
    expect(() => parseServeArgs(['--model', 'm', '--cors-origin', 'https://app.example/path'])).toThrow(/--cors-origin must be an origin/);
    expect(() => parseServeArgs(['--model', 'm', '--cors-origin', 'app.example'])).toThrow(/--cors-origin/);
    expect(() => parseServeArgs(['--model', 'm', '--timeout-ms', '5'])).toThrow(/--timeout-ms needs --backend/);
    expect(() => parseServeArgs(['--backend', 'vllm', ...base, '--dtype', 'q4'])).toThrow(/--dtype is for the in-process engine/);
    expect(() => parseServeArgs(['--backend', 'vllm', ...base, '--threads', '2'])).toThrow(/--threads is for the in-process engine/);
    for (const bad of ['0', '-1', '1.5', 'all', '2000']) expect(() => parseServeArgs(['--model', 'm', '--threads', bad])).toThrow(/--threads must be a whole number from 1 to 1024/);
    expect(() => parseServeArgs(['--model', 'm', '--max-connections', '0'])).toThrow(/--max-connections/);
  });

  it('exits 2 with the usage on a bad command line', async () => {
    const errors: string[] = [];
    const original = console.error;
    console.error = (m: string) => void errors.push(m);
    try {
      expect(await main(['serve', '--backend', 'x'])).toBe(2);
      expect(await main(['bench'])).toBe(2);
    } finally {
      console.error = original;
    }
    expect(errors.join('\n')).toContain('usage: jev-local serve');
  });
});
