import * as ort from 'onnxruntime-node';
import onnxp from 'onnx-proto';
import { readFileSync } from 'node:fs';
const dir = process.argv[2] ?? 'models/tiny-random-llama';
const file = process.argv[3] ?? 'onnx/model.onnx';
const buf = readFileSync(`${dir}/${file}`);
const m = onnxp.onnx.ModelProto.decode(buf);
console.log('ir', String(m.irVersion), 'opset', JSON.stringify(m.opsetImport), 'nodes', m.graph!.node!.length, 'inits', m.graph!.initializer!.length);
const s = await ort.InferenceSession.create(buf);
console.log(s.inputNames.slice(0,5), s.outputNames.slice(0,3));
console.log(JSON.stringify(s.inputMetadata.slice(0,4)));
const cfg = JSON.parse(readFileSync(`${dir}/config.json`,'utf8'));
const B=2,S=5;
const feeds: Record<string, ort.Tensor> = {
  input_ids: new ort.Tensor('int64', BigInt64Array.from([5n,60n,7n,300n,9n, 11n,12n,13n,14n,15n]), [B,S]),
  attention_mask: new ort.Tensor('int64', new BigInt64Array(B*S).fill(1n), [B,S]),
  position_ids: new ort.Tensor('int64', BigInt64Array.from([0n,1n,2n,3n,4n,0n,1n,2n,3n,4n]), [B,S]),
};
for (let i=0;i<cfg.num_hidden_layers;i++) for (const kv of ['key','value']) feeds[`past_key_values.${i}.${kv}`] = new ort.Tensor('float32', new Float32Array(0), [B,cfg.num_key_value_heads,0,cfg.head_dim]);
const t0=performance.now();
const out = await s.run(feeds);
console.log('run ms', performance.now()-t0);
const lg = out.logits!.data as Float32Array; const V = cfg.vocab_size;
console.log(out.logits!.dims, out['present.0.key']!.dims);
for (let b=0;b<B;b++) for (const p of [0, S-1]) {
  const row = lg.subarray((b*S+p)*V, (b*S+p+1)*V);
  let mean=0; for (const x of row) mean+=x; mean/=V; let v=0; for (const x of row) v+=(x-mean)**2; const std=Math.sqrt(v/V);
  let mx=-Infinity, am=0; for (let i=0;i<V;i++) if (row[i]!>mx){mx=row[i]!;am=i;}
  let z=0; for (const x of row) z+=Math.exp(x-mx); 
  const inputTok = Number((feeds.input_ids!.data as BigInt64Array)[b*S+p]);
  console.log(`b${b} p${p} std ${std.toFixed(3)} argmax ${am} pmax ${(1/z).toFixed(4)} inputTokLogitZ ${((row[inputTok]!-mean)/std).toFixed(2)}`);
}
