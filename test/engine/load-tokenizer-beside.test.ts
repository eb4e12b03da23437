/**
 * The tokenizer is read while the model's files are (load-model.ts): a tokenizer that fails is
 * still the load's error, and the model made beside it is disposed, not left holding its session.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PreTrainedModel } from '@huggingface/transformers';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { JevError } from '../../src/contract/index.ts';
import { GENERATED, loadEngine, TINY } from '../support/models.ts';

const root = mkdtempSync(join(tmpdir(), 'jev-tokenizer-beside-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** TINY's fp32 model in a folder of its own under `root`, without the file `drop` (if any). */
function copyModel(name: string, drop: string | null = null): void {
  const from = join(GENERATED, TINY);
  mkdirSync(join(root, name, 'onnx'), { recursive: true });
  for (const f of readdirSync(from)) if (f !== drop && f !== 'onnx' && f !== 'gguf') copyFileSync(join(from, f), join(root, name, f));
  copyFileSync(join(from, 'onnx', 'model.onnx'), join(root, name, 'onnx', 'model.onnx'));
}

describe('the tokenizer read beside the model', () => {
  it('a missing tokenizer.json fails the load with its own error, and the model loaded beside it is disposed', async () => {
    copyModel('no-tokenizer', 'tokenizer.json');
    const dispose = vi.spyOn(PreTrainedModel.prototype, 'dispose');
    try {
      const error = await loadEngine(root, 'no-tokenizer').then(
        () => null,
        (e: unknown) => e,
      );
      expect(JevError.is(error)).toBe(true);
      expect((error as JevError).details).toMatchObject({ reason: 'file_missing', file: expect.stringMatching(/(^|\/)tokenizer\.json$/) });
      // The model's load finished (its session existed) before the tokenizer's error was read: disposed once.
      expect(dispose).toHaveBeenCalledTimes(1);
    } finally {
      dispose.mockRestore();
    }
  });

  it('the same folder with its tokenizer loads, and tokenizes as the original', async () => {
    copyModel('whole');
    const [engine, original] = [await loadEngine(root, 'whole'), await loadEngine(GENERATED, TINY)];
    try {
      const text = 'Hello world, the quick brown fox. Ünïcödé 123';
      const ids = engine.languageModel!.encode(text, false);
      expect(ids.length).toBeGreaterThan(3);
      expect(ids).toEqual(original.languageModel!.encode(text, false));
      expect(engine.languageModel!.tokenizer.decode(ids)).toBe(original.languageModel!.tokenizer.decode(ids));
    } finally {
      await engine.languageModel?.dispose();
      await original.languageModel?.dispose();
    }
  });
});
