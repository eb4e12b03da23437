/**
 * node-llama-cpp (llama.cpp's native build on npm), the serve bench's native peer, installed the
 * first time a run needs it.
 *
 * Not a devDependency: npm writes lockfile entries for every platform package it lists, and the
 * registry this project installs from does not serve the macOS, Windows and RISC-V ones, so a
 * lockfile that names node-llama-cpp makes `npm ci` refuse it ("Missing: @node-llama-cpp/mac-x64@
 * from lock file"). The bench installs the pinned version into `.cache/bench-native/` instead
 * (`npm install --ignore-scripts`: the prebuilt CPU binary of this platform, nothing built, nothing
 * fetched beyond the registry) and imports it from there.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO } from '../../scripts/models/roots.ts';

export const NODE_LLAMA_CPP_VERSION = '3.22.1';

const DIR = join(REPO, '.cache', 'bench-native');
const PACKAGE = join(DIR, 'node_modules', 'node-llama-cpp');

/** The part of node-llama-cpp's API the bench drives. */
export interface NativeLlamaModule {
  getLlama(options: { gpu: false; build: 'never'; progressLogs: boolean; logLevel: never }): Promise<NativeLlama>;
}
export interface NativeLlama {
  loadModel(options: { modelPath: string }): Promise<NativeModel>;
  dispose(): Promise<void>;
}
export interface NativeModel {
  tokenize(text: string): number[];
  createContext(options: { contextSize: number; threads: number; sequences: number }): Promise<NativeContext>;
  dispose(): Promise<void>;
}
export interface NativeContext {
  getSequence(): NativeSequence;
  dispose(): Promise<void>;
}
export interface NativeSequence {
  clearHistory(): Promise<void>;
  evaluateWithoutGeneratingNewTokens(tokens: number[]): Promise<void>;
  evaluate(tokens: number[], options: { temperature: number }): AsyncIterable<number>;
}

function installedVersion(): string | null {
  const file = join(PACKAGE, 'package.json');
  if (!existsSync(file)) return null;
  return (JSON.parse(readFileSync(file, 'utf8')) as { version?: string }).version ?? null;
}

/** node-llama-cpp at the pinned version, installed into .cache/bench-native/ when it is not there yet. */
export async function loadNodeLlamaCpp(log: (...a: unknown[]) => void = console.error): Promise<NativeLlamaModule> {
  if (installedVersion() !== NODE_LLAMA_CPP_VERSION) {
    log(`  installing node-llama-cpp@${NODE_LLAMA_CPP_VERSION} into ${DIR} (the native peer; once)`);
    execFileSync('npm', ['install', '--prefix', DIR, '--no-save', '--ignore-scripts', '--no-audit', '--no-fund', '--no-package-lock', `node-llama-cpp@${NODE_LLAMA_CPP_VERSION}`], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const version = installedVersion();
    if (version !== NODE_LLAMA_CPP_VERSION) throw new Error(`node-llama-cpp@${NODE_LLAMA_CPP_VERSION} did not install into ${DIR} (found ${version ?? 'nothing'})`);
  }
  return (await import(pathToFileURL(join(PACKAGE, 'dist', 'index.js')).href)) as NativeLlamaModule;
}
