import * as ort from 'onnxruntime-node';
import onnxp from 'onnx-proto';
import { readFileSync } from 'node:fs';
await ort.InferenceSession.create('models/tiny-random-llama/onnx/model_quantized.onnx', { graphOptimizationLevel: 'all', optimizedModelFilePath: '/tmp/opt.onnx' });
const m = onnxp.onnx.ModelProto.decode(readFileSync('/tmp/opt.onnx'));
const ops: Record<string, number> = {};
for (const n of m.graph!.node!) { const k = (n.domain||'')+':'+n.opType; ops[k]=(ops[k]??0)+1; }
console.log(ops);
for (const n of m.graph!.node!) if (n.domain) { console.log(n.opType, n.input, n.attribute!.map(a=>a.name+'='+(a.i?.toString()??a.f)).join(',')); break; }
