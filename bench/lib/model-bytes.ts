import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DTYPE_FILES } from '../../src/engine/load/load-model.ts';
import type { Dtype } from '../../src/engine/model/language-model.ts';

/**
 * The bytes of a model's weights as one dtype loads them: its ONNX graph plus the graph's external
 * data files (`<file>_data`, `<file>_data_1`, …), read from the first root that holds the model.
 * This is what `memory` rows compare the renderer's peak with (the "≤ 2× the model's bytes").
 */
export function modelBytes(roots: readonly string[], model: string, dtype: Dtype): number {
  const file = DTYPE_FILES[dtype];
  for (const root of roots) {
    const dir = join(root, model, 'onnx');
    if (!existsSync(join(dir, file))) continue;
    return readdirSync(dir)
      .filter((f) => f === file || f.startsWith(`${file}_data`))
      .reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);
  }
  throw new Error(`modelBytes: no onnx/${file} for ${model} under ${roots.join(', ')}`);
}

/** The size of `<model>/<path>` (a GGUF, say) in the first root that holds it. */
export function fileBytes(roots: readonly string[], model: string, path: string): number {
  for (const root of roots) {
    const file = join(root, model, path);
    if (existsSync(file)) return statSync(file).size;
  }
  throw new Error(`fileBytes: no ${path} for ${model} under ${roots.join(', ')}`);
}
