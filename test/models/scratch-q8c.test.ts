import { it } from 'vitest';
import { AutoModelForCausalLM, AutoTokenizer, Tensor, env } from '@huggingface/transformers';
import { DEFAULT_MODELS_DIR } from '../../scripts/models/generate-models.ts';
it('measure', async () => {
  env.localModelPath = `${DEFAULT_MODELS_DIR}/`; env.allowRemoteModels = false;
  for (const name of ['tiny-random-llama', 'smollm2-135m-random']) {
    const tok = await AutoTokenizer.from_pretrained(name);
    const ids = tok.encode('The quick brown fox jumps over the lazy dog. Is the answer true or false?');
    const mk = () => ({ input_ids: new Tensor('int64', BigInt64Array.from(ids.map(BigInt)), [1, ids.length]), attention_mask: new Tensor('int64', new BigInt64Array(ids.length).fill(1n), [1, ids.length]) });
    const f = await AutoModelForCausalLM.from_pretrained(name, { dtype: 'fp32', device: 'cpu' });
    const fl = ((await f(mk())) as any).logits.data as Float32Array;
    for (const lvl of ['all', 'basic'] as const) {
      const q = await AutoModelForCausalLM.from_pretrained(name, { dtype: 'q8', device: 'cpu', session_options: { graphOptimizationLevel: lvl } });
      const ql = ((await q(mk())) as any).logits.data as Float32Array;
      let mx = 0, ss = 0, agree = 0; const V = ql.length / ids.length;
      for (let i = 0; i < ql.length; i++) { const d = ql[i]! - fl[i]!; mx = Math.max(mx, Math.abs(d)); ss += d * d; }
      for (let p = 0; p < ids.length; p++) { let a=0,b=0; for (let v=0;v<V;v++){ if (ql[p*V+v]!>ql[p*V+a]!) a=v; if (fl[p*V+v]!>fl[p*V+b]!) b=v;} if (a===b) agree++; }
      console.log(name, lvl, 'max', mx.toFixed(4), 'rms', Math.sqrt(ss / ql.length).toFixed(4), 'argmax agree', agree, '/', ids.length);
    }
  }
}, 120000);
