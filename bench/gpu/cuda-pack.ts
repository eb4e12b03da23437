/**
 * `npm run bench:cuda:pack -- --wheel onnxruntime_gpu-1.30.0-….whl`: what bench/gpu/cuda.sh needs
 * on a GPU machine with CUDA but no Node and no network, to run `jev-local serve --device cuda`
 * as the package runs it (bench/gpu/README.md, "--device cuda"):
 *
 * - the server's build (dist/lib/server.js and its two threads, built here by the package's own
 *   vite builds) with a bin beside it, and onnxruntime-node (its Linux x64 binding only) in a
 *   node_modules beside them, as an install of the package has it;
 * - onnxruntime's CUDA provider of the same version, from the onnxruntime-gpu wheel (PyPI is
 *   reachable here, nuget.org is not): libonnxruntime_providers_cuda.so (272 MB, CUDA 13) and
 *   libonnxruntime_providers_shared.so;
 * - cuda.mjs (bench/gpu/cuda.ts, bundled), the model generator, and an official Node binary.
 *
 * The whole is ~210 MiB xz-compressed, more than one device call carries (64 MiB with the working
 * tree), so it is cut into trips (`bench/gpu/.cuda/trip1` …), each under TRIP_LIMIT: one call per
 * trip, each carrying `bench/gpu/.cuda/tripN`, while the machine stays warm; cuda.sh gathers them
 * in /tmp and runs once every trip is there.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { ORT_NODE_VERSION } from '../../src/server/embedded-engine.ts';
import { CUDA_PROVIDER_FILES } from '../../src/server/cuda-provider.ts';
import { NODE_PACKAGE } from './node-package.ts';

/** What one trip may carry beside the working tree (~17 MiB) under the device tool's 64 MiB. */
const TRIP_LIMIT = 44 * 2 ** 20;
const REPO = resolve(import.meta.dirname, '../..');
const CACHE = join(REPO, 'node_modules/.cache/jev-gpu');
const { values } = parseArgs({ options: { wheel: { type: 'string' }, out: { type: 'string', default: join(REPO, 'bench/gpu/.cuda') } } });
const out = resolve(values.out!);
const staging = `${out}.staging`;
const log = (m: string) => console.log(`[cuda-pack] ${m}`);
const xz = (file: string) => execFileSync('xz', ['-6', '-T0', '-f', file]);

rmSync(out, { recursive: true, force: true });
rmSync(staging, { recursive: true, force: true });
mkdirSync(staging, { recursive: true });

// The server as the package ships it: its three builds (vite.server.config.ts).
for (const mode of ['production', 'engine-thread', 'grammar-thread']) {
  execFileSync('npx', ['vite', 'build', '-c', 'vite.server.config.ts', '--mode', mode, '--logLevel', 'warn'], { cwd: REPO, stdio: 'inherit' });
}
for (const f of ['server.js', 'engine-thread.js', 'grammar-thread.js']) copyFileSync(join(REPO, 'dist/lib', f), join(staging, f));
writeFileSync(join(staging, 'jev-local.mjs'), "import { main } from './server.js';\nconst code = await main(process.argv.slice(2));\nif (code >= 0) process.exit(code);\n");
writeFileSync(join(staging, 'package.json'), '{ "type": "module" }\n');
log('server built');

const banner = { js: "import { createRequire as __jevCreateRequire } from 'node:module'; const require = __jevCreateRequire(import.meta.url);" };
const common = { bundle: true, platform: 'node' as const, format: 'esm' as const, target: 'node20', banner, logLevel: 'warning' as const, legalComments: 'none' as const };
await build({ ...common, entryPoints: [join(REPO, 'bench/gpu/cuda.ts')], outfile: join(staging, 'cuda.mjs') });
await build({ ...common, entryPoints: [join(REPO, 'scripts/models/generate.ts')], outfile: join(staging, 'generate.mjs') });
log('cuda.mjs and generate.mjs bundled');

// onnxruntime-node as an install has it, Linux x64 only, and the one package it needs at run time.
const ortNode = join(REPO, 'node_modules/onnxruntime-node');
const bin = 'bin/napi-v6/linux/x64';
for (const part of ['package.json', 'dist', bin]) cpSync(join(ortNode, part), join(staging, 'node_modules/onnxruntime-node', part), { recursive: true });
cpSync(join(REPO, 'node_modules/onnxruntime-common'), join(staging, 'node_modules/onnxruntime-common'), { recursive: true });
xz(join(staging, 'node_modules/onnxruntime-node', bin, 'libonnxruntime.so.1'));
log(`onnxruntime-node ${ORT_NODE_VERSION} copied`);

// The CUDA provider, from the wheel (compressed once, kept in the cache: xz -9e of 272 MB takes minutes).
mkdirSync(CACHE, { recursive: true });
const providers = join(staging, 'node_modules/onnxruntime-node', bin);
for (const file of CUDA_PROVIDER_FILES['linux/x64']!) {
  const cached = join(CACHE, `${file}.${ORT_NODE_VERSION}${file.includes('_cuda') ? '.xz' : ''}`);
  if (!existsSync(cached)) {
    if (!values.wheel) throw new Error(`--wheel: the onnxruntime-gpu ${ORT_NODE_VERSION} wheel (python3 -m pip download --no-deps onnxruntime-gpu==${ORT_NODE_VERSION} …), which holds ${file}`);
    if (!basename(values.wheel).startsWith(`onnxruntime_gpu-${ORT_NODE_VERSION}-`)) throw new Error(`--wheel ${values.wheel} is not onnxruntime-gpu ${ORT_NODE_VERSION}`);
    const raw = cached.replace(/\.xz$/, '');
    execFileSync('python3', ['-c', 'import sys, zipfile; open(sys.argv[3], "wb").write(zipfile.ZipFile(sys.argv[1]).read("onnxruntime/capi/" + sys.argv[2]))', values.wheel, file, raw]);
    if (cached.endsWith('.xz')) execFileSync('xz', ['-9e', '-T0', '-f', raw]);
  }
  copyFileSync(cached, join(providers, cached.endsWith('.xz') ? `${file}.xz` : file));
}
log('CUDA provider copied');

const packed = join(CACHE, `${NODE_PACKAGE.replace('@', '-')}.tgz.node.xz`);
if (!existsSync(packed)) throw new Error(`${packed} is missing: run npm run bench:gpu:pack once (it compresses Node)`);
copyFileSync(packed, join(staging, 'node.xz'));
log(`${NODE_PACKAGE} copied`);

// Files larger than a trip are cut into parts (name.part0, .part1, …); cuda.sh joins them.
const files: { path: string; size: number }[] = [];
const walk = (dir: string): void => {
  for (const f of readdirSync(dir)) {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) walk(p);
    else files.push({ path: relative(staging, p), size: statSync(p).size });
  }
};
walk(staging);
const pieces: { path: string; from: string; start: number; size: number }[] = [];
for (const f of files) {
  if (f.size <= TRIP_LIMIT) pieces.push({ path: f.path, from: f.path, start: 0, size: f.size });
  else for (let i = 0, start = 0; start < f.size; i++, start += TRIP_LIMIT) pieces.push({ path: `${f.path}.part${i}`, from: f.path, start, size: Math.min(TRIP_LIMIT, f.size - start) });
}
// First fit, largest first.
pieces.sort((a, b) => b.size - a.size);
const trips: { bytes: number; pieces: typeof pieces }[] = [];
for (const p of pieces) {
  let trip = trips.find((t) => t.bytes + p.size <= TRIP_LIMIT);
  if (!trip) trips.push((trip = { bytes: 0, pieces: [] }));
  trip.bytes += p.size;
  trip.pieces.push(p);
}
let commit = 'unknown';
try {
  commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).trim();
} catch {
  /* not a checkout */
}
const manifest = { commit, node: NODE_PACKAGE, onnxruntimeNode: ORT_NODE_VERSION, trips: trips.length, files: files.map((f) => f.path) };
for (const [i, trip] of trips.entries()) {
  const dir = join(out, `trip${i + 1}`);
  for (const p of trip.pieces) {
    mkdirSync(dirname(join(dir, p.path)), { recursive: true });
    const bytes = readFileSync(join(staging, p.from)).subarray(p.start, p.start + p.size);
    writeFileSync(join(dir, p.path), bytes);
  }
  writeFileSync(join(dir, `trip${i + 1}.json`), JSON.stringify({ ...manifest, trip: i + 1 }, null, 2));
  log(`trip${i + 1}: ${(trip.bytes / 2 ** 20).toFixed(1)} MiB, ${trip.pieces.length} files`);
}
rmSync(staging, { recursive: true, force: true });
log(`${trips.length} trips in ${out}: one device call each, carrying bench/gpu/.cuda/tripN (bench/gpu/README.md)`);
