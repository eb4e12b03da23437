/**
 * CLI: tsx scripts/models/generate.ts [--only tiny|smol|tiny-gqa|smol-gqa|qwen3|qwen2|llama3|phi3|gemma3|families|<name>[,...]] [--force] [--out DIR]
 * Writes deterministic random test models (Hugging Face layout) into <repo>/models/: random Llama
 * models with a toy tokenizer, and the family models (Qwen3, Qwen2.5, Llama 3.2, Phi-3.5, Gemma 3)
 * with their real tokenizers and chat templates.
 */
import { parseArgs } from 'node:util';
import { DEFAULT_MODELS_DIR, generateModels, knownSpecs } from './generate-models.ts';
import { GQA_FORMATS } from './gqa-graph.ts';
import { WEIGHT_FORMATS } from './linear-formats.ts';
import { EXTERNAL_DATA_FORMATS, ONNX_FILES } from './write-model.ts';

const { values } = parseArgs({
  options: {
    only: { type: 'string', multiple: true },
    force: { type: 'boolean', default: false },
    out: { type: 'string', default: DEFAULT_MODELS_DIR },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (values.help) {
  console.log('usage: tsx scripts/models/generate.ts [--only NAME[,NAME...]]... [--force] [--out DIR]');
  console.log('  --only   spec alias, name or group (comma-separated or repeated); default: all');
  console.log(`           known: ${knownSpecs()}`);
  console.log('  --force  regenerate even when the stamp says the model is up to date');
  console.log('  --out    output directory (default: <repo>/models)');
  console.log('variants written per Llama spec (tiny, smol), all from the same random weights:');
  for (const f of WEIGHT_FORMATS) {
    const ext = EXTERNAL_DATA_FORMATS.includes(f) ? ` + ${ONNX_FILES[f]}_data (external data)` : '';
    console.log(`  ${f.padEnd(6)} <name>/${ONNX_FILES[f]}${ext}`);
  }
  console.log(`  gqa    <name>-gqa/: onnxruntime-genai-builder-style graphs (GroupQueryAttention) in ${GQA_FORMATS.join(', ')}`);
  console.log('  gguf   <name>/gguf/model-f32.gguf, model-q4_0.gguf, model-q8_0.gguf (llama.cpp, same values as fp32 / q4 / q8)');
  console.log('  `--only tiny` also writes tiny-gqa; `--only tiny-gqa` writes only the GQA sibling.');
} else {
  const t0 = performance.now();
  try {
    await generateModels({
      outDir: values.out,
      force: values.force,
      ...(values.only ? { only: values.only } : {}),
      log: (m) => console.log(m),
    });
    console.log(`done in ${((performance.now() - t0) / 1000).toFixed(2)} s`);
  } catch (e) {
    console.error(`generate: ${e instanceof Error ? e.message : String(e)}`);
    process.exitCode = 1;
  }
}
