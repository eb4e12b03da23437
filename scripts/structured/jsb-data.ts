/**
 * JSONSchemaBench's schemas (github.com/guidance-ai/jsonschemabench, `data/<Dataset>/*.json`, about
 * 10k files, 90 MB: never vendored here), read from either
 * - a git repository (a clone, or a bare mirror without a work tree): one `git ls-tree` per
 *   dataset, then every blob through one `git cat-file --batch`; or
 * - a folder of the datasets' folders (`data/` of a clone, or a folder holding `data/`).
 *
 * Each file is one schema; a file that wraps its schema with instances (`{ "schema": {…},
 * "tests": […] }`, as maskbench's copies do) gives its `schema`. A file that cannot be read (a
 * blob the mirror lacks, invalid JSON) is kept with its error, so that it is counted, not lost.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The datasets, in the order of the benchmark's README. */
export const JSB_SETS = ['Glaiveai2K', 'Github_trivial', 'Github_easy', 'Snowplow', 'Github_medium', 'Kubernetes', 'WashingtonPost', 'Github_hard', 'JsonSchemaStore', 'Github_ultra'] as const;

export interface JsbFile {
  set: string;
  /** The file's name inside its dataset folder. */
  name: string;
  /** The schema, or why there is none. */
  schema?: unknown;
  error?: string;
  bytes: number;
}

export type JsbSource = { kind: 'git'; gitDir: string; rev: string } | { kind: 'folder'; dir: string };

/** Where `path` holds the datasets: a folder of dataset folders, a folder with `data/`, or a git repository. */
export function jsbSource(path: string): JsbSource {
  if (!existsSync(path)) throw new Error(`${path} does not exist: clone https://github.com/guidance-ai/jsonschemabench and pass --data path/to/jsonschemabench (or its data/ folder)`);
  const isSetsDir = (d: string) => existsSync(d) && statSync(d).isDirectory() && JSB_SETS.some((s) => existsSync(join(d, s)));
  if (isSetsDir(path)) return { kind: 'folder', dir: path };
  if (isSetsDir(join(path, 'data'))) return { kind: 'folder', dir: join(path, 'data') };
  const git = spawnSync('git', ['--git-dir', existsSync(join(path, '.git')) ? join(path, '.git') : path, 'rev-parse', 'HEAD'], { encoding: 'utf8' });
  if (git.status === 0) return { kind: 'git', gitDir: existsSync(join(path, '.git')) ? join(path, '.git') : path, rev: git.stdout.trim() };
  throw new Error(`${path} is neither a folder of JSONSchemaBench's datasets nor a git repository of it`);
}

/** A short description of the source, for the report. */
export function describeSource(src: JsbSource): string {
  return src.kind === 'git' ? `git ${src.gitDir} @ ${src.rev.slice(0, 12)}` : `folder ${src.dir}`;
}

/** The datasets the source holds, in README order, then any others by name. */
export function listSets(src: JsbSource): string[] {
  let names: string[];
  if (src.kind === 'folder') names = readdirSync(src.dir).filter((n) => statSync(join(src.dir, n)).isDirectory());
  else {
    const out = spawnSync('git', ['--git-dir', src.gitDir, 'ls-tree', '--name-only', `${src.rev}:data`], { encoding: 'utf8' });
    if (out.status !== 0) throw new Error(`git ls-tree ${src.rev}:data failed: ${out.stderr}`);
    names = out.stdout.split('\n').filter(Boolean);
  }
  const known = JSB_SETS.filter((s) => names.includes(s));
  return [...known, ...names.filter((n) => !(JSB_SETS as readonly string[]).includes(n)).sort()];
}

/** Every file of one dataset, sorted by name. */
export async function readSet(src: JsbSource, set: string): Promise<JsbFile[]> {
  const files = src.kind === 'folder' ? readFolder(src.dir, set) : await readGit(src, set);
  return files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function readFolder(dir: string, set: string): JsbFile[] {
  const folder = join(dir, set);
  return readdirSync(folder)
    .filter((n) => n.endsWith('.json'))
    .map((name) => {
      try {
        return parseFile(set, name, readFileSync(join(folder, name)));
      } catch (e) {
        return { set, name, error: `unreadable: ${(e as Error).message}`, bytes: 0 };
      }
    });
}

async function readGit(src: { gitDir: string; rev: string }, set: string): Promise<JsbFile[]> {
  const tree = spawnSync('git', ['--git-dir', src.gitDir, 'ls-tree', `${src.rev}:data/${set}`], { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  if (tree.status !== 0) throw new Error(`git ls-tree ${src.rev}:data/${set} failed: ${tree.stderr}`);
  const entries = tree.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [meta, name] = line.split('\t') as [string, string];
      return { oid: meta.split(' ')[2]!, name };
    })
    .filter((e) => e.name.endsWith('.json'));
  const blobs = await catBatch(src.gitDir, entries.map((e) => e.oid));
  return entries.map(({ oid, name }) => {
    const body = blobs.get(oid);
    return body ? parseFile(set, name, body) : { set, name, error: 'unreadable: the blob is missing from the repository', bytes: 0 };
  });
}

/** The bodies of `oids`, read by one `git cat-file --batch`; a missing object is absent from the map. */
function catBatch(gitDir: string, oids: string[]): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['--git-dir', gitDir, 'cat-file', '--batch'], { stdio: ['pipe', 'pipe', 'inherit'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`git cat-file --batch exited ${code}`));
      const out = Buffer.concat(chunks);
      const map = new Map<string, Buffer>();
      let i = 0;
      while (i < out.length) {
        const nl = out.indexOf(10, i);
        const header = out.toString('utf8', i, nl).split(' ');
        i = nl + 1;
        if (header[1] === 'missing' || header.length < 3) continue;
        const size = Number(header[2]);
        map.set(header[0]!, out.subarray(i, i + size));
        i += size + 1; // the body, then its newline
      }
      resolve(map);
    });
    child.stdin.end(oids.map((o) => `${o}\n`).join(''));
  });
}

function parseFile(set: string, name: string, body: Buffer): JsbFile {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch (e) {
    return { set, name, error: `invalid JSON: ${(e as Error).message}`, bytes: body.length };
  }
  return { set, name, schema: unwrap(value), bytes: body.length };
}

/** A schema wrapped with its instances (`{ schema, tests }`) gives the schema; anything else is the schema itself. */
export function unwrap(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const v = value as Record<string, unknown>;
  const inner = v['schema'];
  if (Array.isArray(v['tests']) && typeof inner === 'object' && inner !== null && !('type' in v) && !('properties' in v)) return inner;
  return value;
}
