import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENERATED } from '../../scripts/models/roots.ts';

const REPO = join(import.meta.dirname, '../..');

/**
 * `jev-local serve` from the published package: the server and its threads built into dist/lib
 * (vite.server.config.ts: server.js, engine-thread.js, grammar-thread.js), packed by `npm pack`
 * (no scripts), unpacked into an empty folder without node_modules, and its bin run there — where
 * no src/ and no tsx exist, so only the build can answer. A relay's start-up reads a generated
 * model's tokenizer, then stops at the unreachable engine: the bundle loads, parses its arguments
 * and reads a tokenizer with none of the package's dependencies installed. The in-process engine
 * is refused until onnxruntime-node (an optional peer dependency) is there; with it (the
 * checkout's, linked into the folder's node_modules), the packed server serves the bundled
 * TinyStories-656K: a decision, a chat constrained by a JSON schema (the grammar thread), /v1/models.
 */
describe('the packed bin', () => {
  let dir: string;
  let files: string[];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'jev-pack-'));
    for (const mode of ['production', 'engine-thread', 'grammar-thread']) {
      execFileSync('npx', ['vite', 'build', '-c', 'vite.server.config.ts', '--mode', mode, '--logLevel', 'error'], { cwd: REPO, stdio: 'pipe' });
    }
    const out = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const packed = JSON.parse(out) as { filename: string; files: { path: string }[] }[];
    files = packed[0]!.files.map((f) => f.path);
    execFileSync('tar', ['-xzf', join(dir, packed[0]!.filename), '-C', dir]);
  }, 180_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('holds the bin and the server build it imports, and no sources', () => {
    expect(files).toContain('bin/jev-local.mjs');
    expect(files).toContain('dist/lib/server.js');
    expect(files).toContain('dist/lib/engine-thread.js');
    expect(files).toContain('dist/lib/grammar-thread.js');
    expect(files).toContain('vendor/models/TinyStories-656K/onnx/model.onnx');
    expect(files).toContain('vendor/models/TinyStories-656K/tokenizer.json');
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

  it('refuses the in-process engine without onnxruntime-node, naming the install', () => {
    const bin = join(dir, 'package/bin/jev-local.mjs');
    const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string>; devDependencies: Record<string, string> };
    const version = pkg.peerDependencies['onnxruntime-node'];
    expect(pkg.devDependencies['onnxruntime-node']).toBe(version);
    const serve = spawnSync(process.execPath, [bin, 'serve', '--model', 'TinyStories-656K', '--port', '0'], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    expect(serve.stderr).toContain(`npm i onnxruntime-node@${version}`);
    expect(serve.status).toBe(1);
  });

  it('serves the bundled model in-process once onnxruntime-node is installed: its threads are the build', async () => {
    await servesBundled([join(dir, 'package/bin/jev-local.mjs'), 'serve', '--model', 'TinyStories-656K', '--port', '0']);
  });

  it('serves the same from `node --input-type=module -e`: its threads start without the flag, which Node refuses in a thread started from a file', async () => {
    const server = pathToFileURL(join(dir, 'package/dist/lib/server.js')).href;
    const code = `const { main } = await import(${JSON.stringify(server)}); const c = await main(['serve', '--model', 'TinyStories-656K', '--port', '0']); if (c >= 0) process.exit(c);`;
    await servesBundled(['--input-type=module', '-e', code]);
  });

  /** Starts `node ...args` in the unpacked folder, with onnxruntime-node linked there, and asks it for its models, a decision and a chat under a JSON schema (the grammar thread). */
  async function servesBundled(args: string[]): Promise<void> {
    if (!existsSync(join(dir, 'node_modules/onnxruntime-node'))) {
      mkdirSync(join(dir, 'node_modules'), { recursive: true });
      symlinkSync(join(REPO, 'node_modules/onnxruntime-node'), join(dir, 'node_modules/onnxruntime-node'), 'dir');
    }
    const child = spawn(process.execPath, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /serving TinyStories-656K in-process .* on (http:\/\/\S+)/.exec(out);
          if (m) resolve(m[1]!);
        });
        child.on('exit', (code) => reject(new Error(`the packed server exited (${code}): ${err}`)));
      });
      const post = (path: string, body: unknown) => fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const models = await fetch(`${url}/v1/models`);
      expect(models.status).toBe(200);
      expect(((await models.json()) as { data: { id: string }[] }).data.map((m) => m.id)).toContain('TinyStories-656K');
      const decision = await post('/inference/jev/api/alpha/decisions', {
        model: 'jev',
        state: 'I was charged twice.',
        questions: { refund: { type: 'noul', instructions: 'Is a refund asked for?' } },
      });
      expect(decision.status, err).toBe(200);
      const noul = ((await decision.json()) as { answers: { refund: { noul: number } } }).answers.refund.noul;
      expect(noul).toBeGreaterThan(0);
      expect(noul).toBeLessThan(1);
      // TinyStories' 2,048 tokens lack "{": an integer is the JSON it can write, under the grammar thread's mask.
      const chat = await post('/v1/chat/completions', {
        model: 'TinyStories-656K',
        max_tokens: 8,
        messages: [{ role: 'user', content: 'Once upon a time' }],
        response_format: { type: 'json_schema', json_schema: { name: 'n', schema: { type: 'integer' } } },
      });
      expect(chat.status, err).toBe(200);
      expect(((await chat.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toMatch(/^-?\d+$/);
    } finally {
      child.kill();
    }
  }
});
