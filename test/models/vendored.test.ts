// The models shipped in vendor/models are the files their README names, byte for byte, and read as
// the hub layout: a changed or truncated file fails here, not somewhere deep in a browser test.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TINYSTORIES, VENDORED } from '../../scripts/models/roots.ts';

const README = readFileSync(join(VENDORED, 'README.md'), 'utf8');

describe('vendor/models', () => {
  const rows = [...README.matchAll(/^\| (\S+) \| ([0-9a-f]{64}) \|$/gm)].map((m) => ({ file: m[1]!, sha256: m[2]! }));

  it('the README lists a hash for the ONNX graph and the GGUF', () => {
    expect(rows.map((r) => r.file).sort()).toEqual(['gguf/model-f32.gguf', 'onnx/model.onnx']);
  });

  for (const { file, sha256 } of rows) {
    it(`${TINYSTORIES}/${file} has the sha256 the README gives`, () => {
      expect(createHash('sha256').update(readFileSync(join(VENDORED, TINYSTORIES, file))).digest('hex')).toBe(sha256);
    });
  }

  it('has the config and tokenizer files transformers.js reads, with the architecture the README gives', () => {
    const config = JSON.parse(readFileSync(join(VENDORED, TINYSTORIES, 'config.json'), 'utf8'));
    expect(config).toMatchObject({ model_type: 'llama', num_hidden_layers: 2, hidden_size: 128, vocab_size: 2048, max_position_embeddings: 512 });
    const tokenizer = JSON.parse(readFileSync(join(VENDORED, TINYSTORIES, 'tokenizer.json'), 'utf8'));
    expect(Object.keys(tokenizer.model.vocab)).toHaveLength(2048);
    for (const f of ['generation_config.json', 'tokenizer_config.json', 'special_tokens_map.json']) JSON.parse(readFileSync(join(VENDORED, TINYSTORIES, f), 'utf8'));
  });
});
