import { describe, expect, it } from 'vitest';
import { JevError } from '../../src/contract/index.ts';
import { errorInfo } from '../../src/ui/state/error-info.ts';
import { createLoadProgress } from '../../src/ui/state/load-progress.ts';

describe("the page's view of a failed load", () => {
  it('reads details.reason from the error the facade rejects with (rebuilt after the worker boundary)', () => {
    const sent = new JevError('model_load_failed', 'http://h cannot be reached', { param: 'host', details: { reason: 'host_unreachable', host: 'http://h' } });
    const info = errorInfo(JevError.fromJSON(JSON.parse(JSON.stringify(sent.toJSON()))));
    expect(info).toEqual({ message: 'http://h cannot be reached', param: 'host', code: 'model_load_failed', status: 503, reason: 'host_unreachable', details: { reason: 'host_unreachable', host: 'http://h' } });
    expect(errorInfo(new Error('plain')).reason).toBe(null);
    expect(errorInfo(new Error('plain')).details).toBe(null);
  });

  it('a fallback note alone counts no file (ProgressList then draws no bar); files count as they come', () => {
    const progress = createLoadProgress();
    progress.push({ type: 'fallback', from: 'webgpu', to: 'wasm', reason: 'no kernel for Foo' });
    expect(progress.notes.value).toEqual(['WebGPU failed (no kernel for Foo), so the engine falls back to wasm.']);
    expect(progress.totals.value).toEqual({ loaded: 0, total: 0, files: 0, done: 0 });
    progress.push({ type: 'file', file: 'onnx/model_fp16.onnx_data', loaded: 100, total: 400 });
    progress.push({ type: 'file-done', file: 'config.json' });
    expect(progress.totals.value).toMatchObject({ files: 2, done: 1, loaded: 100, total: 400 });
  });
});
