import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENERATED } from '../../scripts/models/roots.ts';

const REPO = join(import.meta.dirname, '../..');

/**
 * `jev-local serve` from the published package: the server built into dist/lib/server.js
 * (vite.server.config.ts), packed by `npm pack` (no scripts), unpacked into an empty folder
 * without node_modules, and its bin run there — where no src/ and no tsx exist, so only the build
 * can answer. Its start-up reads a generated model's tokenizer, then stops at the unreachable
 * engine: the bundle loads, parses its arguments and reads a tokenizer with none of the package's
 * dependencies installed.
 */
describe('the packed bin', () => {
  let dir: string;
  let files: string[];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'jev-pack-'));
    execFileSync('npx', ['vite', 'build', '-c', 'vite.server.config.ts', '--logLevel', 'error'], { cwd: REPO, stdio: 'pipe' });
    const out = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const packed = JSON.parse(out) as { filename: string; files: { path: string }[] }[];
    files = packed[0]!.files.map((f) => f.path);
    execFileSync('tar', ['-xzf', join(dir, packed[0]!.filename), '-C', dir]);
  }, 180_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('holds the bin and the server build it imports, and no sources', () => {
    expect(files).toContain('bin/jev-local.mjs');
    expect(files).toContain('dist/lib/server.js');
    expect(files.filter((f) => f.startsWith('src/'))).toEqual([]);
    expect(readdirSync(join(dir, 'package'))).not.toContain('node_modules');
  });

  it('answers --help, and starts up to the engine check from the build alone', () => {
    const bin = join(dir, 'package/bin/jev-local.mjs');
    const help = spawnSync(process.execPath, [bin, '--help'], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('jev-local serve --backend sglang|vllm');
    const serve = spawnSync(process.execPath, [bin, 'serve', '--backend', 'sglang', '--backend-url', 'http://127.0.0.1:1', '--model', 'tiny-random-llama', '--host', GENERATED, '--port', '0'], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 60_000,
    });
    // The tokenizer was read (a missing one is model_load_failed); the engine is not there.
    expect(serve.stderr).not.toContain('could not be read');
    expect(serve.stderr).toContain('is unavailable');
    expect(serve.status).toBe(1);
  });

  it('refuses the in-process engine, which runs from a checkout only, saying so', () => {
    const bin = join(dir, 'package/bin/jev-local.mjs');
    const serve = spawnSync(process.execPath, [bin, 'serve', '--model', 'tiny-random-llama', '--host', GENERATED, '--port', '0'], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    expect(serve.stderr).toContain('the published package serves --backend sglang|vllm only');
    expect(serve.status).toBe(1);
  });
});
