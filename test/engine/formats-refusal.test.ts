import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataType, GraphBuilder } from '../../scripts/models/onnx-graph.ts';
import { JevError } from '../../src/contract/index.ts';
import { missingOperator } from '../../src/engine/load/load-model.ts';
import { GENERATED, loadEngine, TINY } from '../support/models.ts';

/**
 * A format the backend cannot run is refused at load time with `model_load_failed` naming the
 * operator and a format of the same model that works, never a crash in a request. The graphs
 * here are real ONNX files onnxruntime-node refuses: `Tan` over float64 (a standard operator
 * whose CPU kernel exists only for float32), and an operator no opset registers.
 */

const SOURCE = join(GENERATED, TINY);
let root: string;

/** A model folder: the tiny Llama's config and tokenizer, its real q4 graph, and a broken model.onnx. */
function brokenModel(name: string, opType: string, elemType: number): void {
  const dir = join(root, name);
  mkdirSync(join(dir, 'onnx'), { recursive: true });
  for (const f of readdirSync(SOURCE)) if (f.endsWith('.json')) copyFileSync(join(SOURCE, f), join(dir, f));
  copyFileSync(join(SOURCE, 'onnx', 'model_q4.onnx'), join(dir, 'onnx', 'model_q4.onnx'));
  const g = new GraphBuilder(name);
  const x = g.input('x', elemType as DataType, [2, 2]);
  g.op(opType, [x], 'the_node', {}, 'y');
  g.output('y', elemType as DataType, [2, 2]);
  writeFileSync(join(dir, 'onnx', 'model.onnx'), g.toModelProto({ irVersion: 8, opset: 13, producerName: 'jev-test', producerVersion: '1' }).toBytes());
}

async function loadError(model: string): Promise<JevError> {
  const e = await loadEngine(root, model, 'fp32').then(
    () => null,
    (x: unknown) => x,
  );
  expect(JevError.is(e), String(e)).toBe(true);
  return e as JevError;
}

describe.skipIf(!existsSync(join(SOURCE, 'onnx', 'model_q4.onnx')))('refusing a format the backend cannot run', () => {
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'jev-refusal-'));
    brokenModel('no-kernel', 'Tan', 11 /* DOUBLE */);
    brokenModel('no-op', 'NoSuchOperator', DataType.FLOAT);
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('a missing kernel: model_load_failed naming the operator, its node, and a dtype the model offers that runs', async () => {
    const e = await loadError('no-kernel');
    expect(e.code).toBe('model_load_failed');
    expect(e.param).toBe('dtype');
    expect(e.message).toContain('Tan(7)');
    expect(e.message).toContain('the_node');
    expect(e.message).toContain('use dtype q4 instead');
    expect(e.details).toMatchObject({ reason: 'unsupported_format', dtype: 'fp32', device: 'cpu', operator: 'Tan(7)', instead: 'q4' });
  });

  it('an operator the runtime does not know: the same refusal', async () => {
    const e = await loadError('no-op');
    expect(e.code).toBe('model_load_failed');
    expect(e.details).toMatchObject({ reason: 'unsupported_format', operator: 'NoSuchOperator(13)', instead: 'q4' });
  });

  it('the format that the refusal names does load and answer', async () => {
    const engine = await loadEngine(root, 'no-kernel', 'q4');
    const res = await engine.decide({ model: 'jev', state: 'A dog.', questions: { q: { type: 'noul', instructions: 'Is it a dog?', criteria: { true: 'yes', false: 'no' } } } }, { id: 'r1' });
    expect(res.answers['q']!.type).toBe('noul');
    await engine.languageModel!.dispose();
  });

  it("parses onnxruntime's wording of both failures", () => {
    expect(missingOperator(new Error("Could not find an implementation for Tan(7) node with name 'the_node'"))).toEqual({ operator: 'Tan(7)', node: 'the_node' });
    expect(
      missingOperator(new Error('This is an invalid model. In Node, ("n0", Mish, "", -1) : ("x": tensor(float16),) -> ("y": tensor(float16),) , Error No Op registered for Mish with domain_version of 13')),
    ).toEqual({ operator: 'Mish(13)', node: 'n0' });
  });
});
