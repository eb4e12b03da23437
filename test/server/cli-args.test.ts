import { describe, expect, it } from 'vitest';
import { parseServeArgs, SERVE_DEFAULTS, UsageError } from '../../src/server/cli-args.ts';
import { main } from '../../src/server/main.ts';

describe('jev-local serve arguments', () => {
  it('reads the contract\'s flags, with defaults for the optional ones', () => {
    const o = parseServeArgs(['--backend', 'sglang', '--backend-url', 'http://gpu:30000/', '--model', 'Qwen/Qwen3-0.6B']);
    expect(o).toEqual({
      backend: 'sglang',
      backendUrl: 'http://gpu:30000',
      model: 'Qwen/Qwen3-0.6B',
      host: SERVE_DEFAULTS.host,
      backendModel: 'Qwen/Qwen3-0.6B',
      port: SERVE_DEFAULTS.port,
      bind: '127.0.0.1',
      apiKey: undefined,
      timeoutMs: SERVE_DEFAULTS.timeoutMs,
    });
    const all = parseServeArgs(['--backend=vllm', '--backend-url=http://v:8000', '--model=m', '--host', 'file:///models', '--port', '9000', '--bind', '0.0.0.0', '--api-key', 'k', '--timeout-ms', '5000', '--backend-model', 'served']);
    expect(all).toMatchObject({ backend: 'vllm', host: 'file:///models', port: 9000, bind: '0.0.0.0', apiKey: 'k', timeoutMs: 5000, backendModel: 'served' });
  });

  it('refuses what it cannot run, naming the flag', () => {
    const base = ['--backend-url', 'http://x', '--model', 'm'];
    expect(() => parseServeArgs(base)).toThrow(/--backend is required/);
    expect(() => parseServeArgs(['--backend', 'tgi', ...base])).toThrow(/sglang or vllm/);
    expect(() => parseServeArgs(['--backend', 'vllm', '--backend-url', 'gpu:8000', '--model', 'm'])).toThrow(/http\(s\) URL/);
    expect(() => parseServeArgs(['--backend', 'vllm', ...base, '--port', '70000'])).toThrow(/--port/);
    expect(() => parseServeArgs(['--backend', 'vllm', ...base, '--timeout-ms'])).toThrow(/needs a value/);
    expect(() => parseServeArgs(['--backend', 'vllm', ...base, '--gpu'])).toThrow(UsageError);
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
