import * as ort from 'onnxruntime-node';
const dir = process.argv[2] ?? 'models/tiny-random-llama'; const L = Number(process.argv[3] ?? 2), KV = Number(process.argv[4] ?? 2), HD = Number(process.argv[5] ?? 16);
const ids = [5, 60, 7, 300, 9, 11];
const run = async (file: string, level: 'disabled'|'basic'|'all') => {
  const s = await ort.InferenceSession.create(`${dir}/${file}`, { graphOptimizationLevel: level });
  const S = ids.length;
  const feeds: Record<string, ort.Tensor> = {
    input_ids: new ort.Tensor('int64', BigInt64Array.from(ids.map(BigInt)), [1,S]),
    attention_mask: new ort.Tensor('int64', new BigInt64Array(S).fill(1n), [1,S]),
    position_ids: new ort.Tensor('int64', BigInt64Array.from(ids.map((_,i)=>BigInt(i))), [1,S]),
  };
  for (let i=0;i<L;i++) for (const kv of ['key','value']) feeds[`past_key_values.${i}.${kv}`] = new ort.Tensor('float32', new Float32Array(0), [1,KV,0,HD]);
  const out = await s.run(feeds);
  return out.logits!.data as Float32Array;
};
const d = (a: Float32Array, b: Float32Array) => { let m=0; for (let i=0;i<a.length;i++) m=Math.max(m,Math.abs(a[i]!-b[i]!)); return m; };
const f = await run('onnx/model.onnx','all');
for (const lvl of ['disabled','basic','all'] as const) { const q = await run('onnx/model_quantized.onnx', lvl); console.log(lvl, 'q8 vs fp32', d(q,f)); }
console.log('q8 disabled vs all', d(await run('onnx/model_quantized.onnx','disabled'), await run('onnx/model_quantized.onnx','all')));
