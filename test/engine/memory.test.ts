// status().memory and unload() on an in-process engine (onnxruntime-node), checked against
// numbers found another way: the model's bytes against the sizes of its files on disk, the
// key/value cache's against the prefix cache's tokens times what one token costs by the model's
// config.json (layers × key and value × key/value heads × head size × 4 bytes of fp32).
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.ts';
import { loadEngine, TINYSTORIES, VENDORED } from '../support/models.ts';

const QUESTIONS = {
  happy: { type: 'noul', instructions: 'Is the story happy?', criteria: { true: 'Happy', false: 'Sad' } },
};
const STATE = 'Once upon a time, a little dog found a red ball in the park and played with it all day.';

/** Bytes of one token's key/value cache, from config.json alone. */
function bytesPerToken(root: string, model: string): number {
  const c = JSON.parse(readFileSync(join(root, model, 'config.json'), 'utf8')) as Record<string, number>;
  const headSize = c['hidden_size']! / c['num_attention_heads']!;
  return c['num_hidden_layers']! * 2 * c['num_key_value_heads']! * headSize * 4;
}

describe('status().memory and unload()', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await loadEngine(VENDORED, TINYSTORIES);
  });
  afterAll(async () => {
    await engine?.languageModel?.dispose();
  });

  it("counts the model's bytes as the sizes of its weight files, and no cache before a request", async () => {
    const { memory } = await engine.status();
    expect(memory.modelBytes).toBe(statSync(join(VENDORED, TINYSTORIES, 'onnx', 'model.onnx')).size);
    expect(memory.kvCacheBytes).toBe(0);
    // Node: no wasm heap, no WebGPU.
    expect(memory.wasmHeapBytes).toBeNull();
    expect(memory.webgpuBufferBytes).toBeNull();
  });

  it("counts the key/value caches a request leaves as the prefix cache's tokens times one token's bytes", async () => {
    await engine.decide({ model: 'jev', state: STATE, questions: QUESTIONS }, { id: 'm1' });
    await engine.chat({ model: 'jev', messages: [{ role: 'user', content: 'Tell me a story.' }], max_tokens: 4 }, { id: 'm2' });
    const { memory, prefixCache } = await engine.status();
    expect(prefixCache.entries).toBeGreaterThan(0);
    expect(memory.kvCacheBytes).toBe(prefixCache.tokens * bytesPerToken(VENDORED, TINYSTORIES));
    expect(memory.kvCacheBytes).toBe(prefixCache.bytes);
  });

  it('unload() frees the model and its caches, reports what it freed, refuses requests until the next load', async () => {
    const before = (await engine.status()).memory;
    const report = await engine.unload();
    expect(report.freed).toEqual(before);
    expect(report.status.state).toBe('idle');
    expect(report.status.model).toBeNull();
    expect(report.status.memory).toEqual({ modelBytes: 0, kvCacheBytes: 0, wasmHeapBytes: null, webgpuBufferBytes: null });
    expect(report.status.counters.liveTensors).toBe(0);
    expect(engine.languageModel).toBeNull();
    await expect(engine.decide({ model: 'jev', state: STATE, questions: QUESTIONS }, { id: 'm3' })).rejects.toMatchObject({ code: 'engine_unavailable' });
    // Nothing left to free the second time.
    expect((await engine.unload()).freed.modelBytes).toBe(0);

    await engine.load({ model: TINYSTORIES, host: 'http://unused.invalid', device: 'auto', dtype: 'fp32' });
    const again = await engine.status();
    expect(again.memory.modelBytes).toBe(before.modelBytes);
    const res = await engine.decide({ model: 'jev', state: STATE, questions: QUESTIONS }, { id: 'm4' });
    expect(Object.keys(res.answers)).toEqual(['happy']);
  });
});
