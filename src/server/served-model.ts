import { fileURLToPath } from 'node:url';
import { isAbsolute, resolve } from 'node:path';
import { AutoConfig, AutoTokenizer, env } from '@huggingface/transformers';
import { JevError } from '../contract/index.ts';
import { applyRuntimeConfig } from '../engine/load/runtime-env.ts';
import { byteLevelAscii } from '../engine/model/byte-level-ascii.ts';
import { tokenizerModel, type TokenizerModel } from '../engine/model/tokenizer-model.ts';

/**
 * The model's tokenizer, chat template and config from `{host}/{model}/resolve/main/{file}` (the
 * page's layout; `host` may also be `file://…` or a folder holding `{model}/…`), loaded by
 * transformers.js' AutoTokenizer as the browser's engine loads them (the same `applyRuntimeConfig`),
 * so that a request's prompt ids here are the ids the browser would compute. No weights are read.
 */
export async function loadServedModel(model: string, host: string): Promise<TokenizerModel> {
  const folder = localFolder(host);
  applyRuntimeConfig(folder ? { localModelPath: folder } : {}, folder ? undefined : host);
  // Stateless: nothing written beside the package (transformers.js' file cache).
  env.useFSCache = false;
  try {
    const [tokenizer, config] = await Promise.all([AutoTokenizer.from_pretrained(model), AutoConfig.from_pretrained(model)]);
    byteLevelAscii(tokenizer); // the same ids as the browser's, which does the same (byte-level-ascii.ts)
    return tokenizerModel(model, tokenizer, config);
  } catch (e) {
    const where = folder ? `${folder}/${model}` : `${host.replace(/\/+$/, '')}/${model}/resolve/main/`;
    throw new JevError('model_load_failed', `The tokenizer and config of ${model} could not be read from ${where}: ${(e as Error).message ?? String(e)}`, {
      param: 'model',
      details: { reason: 'tokenizer_unavailable', model, host },
      cause: e,
    });
  }
}

/** The folder a `file://` or path host names; null for an http(s) host. */
export function localFolder(host: string): string | null {
  if (/^https?:\/\//i.test(host)) return null;
  if (host.startsWith('file:')) return fileURLToPath(host).replace(/\/+$/, '');
  return (isAbsolute(host) ? host : resolve(host)).replace(/\/+$/, '');
}
