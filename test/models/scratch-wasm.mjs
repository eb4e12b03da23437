import * as ort from 'onnxruntime-web';
import * as ortn from 'onnxruntime-node';
import { readFileSync } from 'node:fs';
ort.env.wasm.numThreads = 1;
const [dir, file, L, KV, HD] = [process.argv[2], process.argv[3], +process.argv[4], +process.argv[5], +process.argv[6]];
const buf = readFileSync(`${dir}/${file}`);
const mkFeeds = (O) => {
  const B=2,S=4;
  const f = {
    input_ids: new O.Tensor('int64', BigInt64Array.from([5n,60n,7n,300n, 11n,12n,0n,0n]), [B,S]),
    attention_mask: new O.Tensor('int64', BigInt64Array.from([1n,1n,1n,1n,1n,1n,0n,0n]), [B,S]),
    position_ids: new O.Tensor('int64', BigInt64Array.from([0n,1n,2n,3n,0n,1n,1n,1n]), [B,S]),
  };
  for (let i=0;i<L;i++) for (const kv of ['key','value']) f[`past_key_values.${i}.${kv}`] = new O.Tensor('float32', new Float32Array(0), [B,KV,0,HD]);
  return f;
};
const sw = await ort.InferenceSession.create(buf, { executionProviders: ['wasm'] });
const ow = await sw.run(mkFeeds(ort));
const sn = await ortn.InferenceSession.create(buf, { graphOptimizationLevel: 'basic' });
const on = await sn.run(mkFeeds(ortn));
let m=0; const a=ow.logits.data, b=on.logits.data; for (let i=0;i<a.length;i++) m=Math.max(m,Math.abs(a[i]-b[i]));
console.log(file, 'wasm vs node(basic) max diff', m, ow.logits.dims);
