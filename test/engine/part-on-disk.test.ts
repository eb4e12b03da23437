/**
 * A kept part mounted unread (src/engine/load/storage/part-on-disk.ts): onnxruntime-web itself (the
 * app's bundle, wasm, in Node) creates the session from parts on disk, read with `fs.readSync` as
 * it asks for each initializer's range:
 *
 * - the same logits, bit for bit, as with the parts given whole (fp32 and q4 rewrites, compacted
 *   as a kept rewrite is: test/engine/compact-external.test.ts);
 * - each part read exactly as far as its initializers reach (their lengths summed, from an
 *   independent ONNX decoder), and never more held than the largest of them;
 * - a part cut short on disk fails the session's creation (the load then reads the parts whole:
 *   test/engine/load-return-visit.test.ts), and a closed part reads nothing.
 */
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import onnxProto from 'onnx-proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MODELS_DIR, generateModels } from '../../scripts/models/generate-models.ts';
import { TINY_RANDOM_LLAMA as SPEC } from '../../scripts/models/specs.ts';
import { compactExternal } from '../../src/engine/graph/compact-external.ts';
import { INLINE_WEIGHTS, rewriteSession } from '../../src/engine/load/rewrite-session.ts';
import { rewritesOn } from '../../src/engine/load/session-rewrites.ts';
import { PartOnDisk } from '../../src/engine/load/storage/part-on-disk.ts';
import { loadOrtWeb, promptLogits, type OrtSession, type OrtWeb } from '../support/ort-web.ts';

const ONNX = join(DEFAULT_MODELS_DIR, SPEC.name, 'onnx');
const KEPT = 'kept-part';
let dir: string;
let ort: OrtWeb;

beforeAll(async () => {
  await generateModels({ only: 'tiny' }); // no-op when the stamp is current
  ort = await loadOrtWeb();
  dir = mkdtempSync(join(tmpdir(), 'part-on-disk-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The parts a kept rewrite of `file` mounts (its added files and the compacted part of the model's own), and its graph; the lm_head kept in the graph, so that the session gives logits. */
function keptRewrite(file: string) {
  const model = new Uint8Array(readFileSync(join(ONNX, file)));
  const dtype = file === 'model.onnx' ? 'fp32' : 'q4';
  const rewrite = rewriteSession(model, [], rewritesOn('wasm', dtype), false);
  const out = compactExternal(rewrite.graph, INLINE_WEIGHTS, model, KEPT)!;
  expect(out).not.toBeNull();
  const parts = [...rewrite.added.map((f) => ({ path: f.path, data: f.data as Uint8Array })), { path: KEPT, data: out.data }];
  return { graph: out.graph, parts };
}

/** Per mounted file: the lengths of the initializers that read it (an independent decoder). */
function reads(graph: Uint8Array): Map<string, number[]> {
  const by = new Map<string, number[]>();
  for (const t of onnxProto.onnx.ModelProto.decode(graph).graph!.initializer ?? []) {
    const e = Object.fromEntries((t.externalData ?? []).map((x) => [x.key, x.value]));
    if (!e['location']) continue;
    by.set(e['location'], [...(by.get(e['location']) ?? []), Number(e['length'])]);
  }
  return by;
}

/** `bytes` written to a file, mounted as a part on disk; `cut`: the file holds that many bytes fewer than the part says. */
function onDisk(name: string, bytes: Uint8Array, cut = 0) {
  const path = join(dir, encodeURIComponent(name));
  writeFileSync(path, bytes.subarray(0, bytes.byteLength - cut));
  const fd = openSync(path, 'r');
  let closed = 0;
  const part = new PartOnDisk({ read: (into, at) => readSync(fd, into, 0, into.byteLength, at), close: () => (closeSync(fd), closed++) }, bytes.byteLength);
  return { part, closed: () => closed };
}

const logits = (session: OrtSession) => promptLogits(ort, session, [1, 17, 42, 7, 99], { kvHeads: SPEC.numKeyValueHeads, headDim: SPEC.headDim }, false);

describe('parts on disk, in onnxruntime-web', () => {
  for (const file of ['model.onnx', 'model_q4.onnx']) {
    it(`${file}: the same logits bit for bit; each part read as far as its initializers, one at a time`, async () => {
      const { graph, parts } = keptRewrite(file);
      const mounted = parts.map((p) => ({ ...onDisk(p.path, p.data), path: p.path }));
      const whole = await ort.InferenceSession.create(graph, { executionProviders: ['wasm'], externalData: parts });
      let lazy: OrtSession | null = null;
      try {
        lazy = await ort.InferenceSession.create(graph, { executionProviders: ['wasm'], externalData: mounted.map((m) => ({ path: m.path, data: m.part })) });
        expect(await logits(lazy)).toEqual(await logits(whole));
        const byFile = reads(graph);
        for (const m of mounted) {
          const lengths = byFile.get(m.path)!;
          expect(lengths.length, m.path).toBeGreaterThan(0);
          expect(m.part.bytesRead, m.path).toBe(lengths.reduce((a, b) => a + b, 0));
          expect(m.part.scratchBytes, m.path).toBe(Math.max(...lengths));
        }
        // At fp32 the part of the model's own file is most of the weights; never held whole.
        if (file === 'model.onnx') {
          const kept = mounted.find((m) => m.path === KEPT)!;
          expect(kept.part.scratchBytes).toBeLessThan(kept.part.byteLength / 4);
        }
      } finally {
        await whole.release();
        await lazy?.release();
        for (const m of mounted) m.part.close();
      }
      for (const m of mounted) expect(m.closed(), m.path).toBe(1);
    });
  }

  it('a part cut short on disk fails the session; a closed part reads nothing', async () => {
    const { graph, parts } = keptRewrite('model_q4.onnx');
    const mounted = parts.map((p) => ({ ...onDisk(p.path, p.data, p.path === KEPT ? 0 : 64), path: p.path }));
    await expect(ort.InferenceSession.create(graph, { executionProviders: ['wasm'], externalData: mounted.map((m) => ({ path: m.path, data: m.part })) })).rejects.toThrow();
    const part = mounted[0]!.part;
    part.close();
    expect(() => part.subarray(0, 1)).toThrow(/closed/);
    expect(() => mounted[1]!.part.subarray(0, mounted[1]!.part.byteLength + 1)).toThrow(RangeError);
    for (const m of mounted) m.part.close();
    expect(mounted[0]!.closed()).toBe(1); // closing twice closes once
  });
});
