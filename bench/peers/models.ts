/**
 * The models the peer comparison runs, each as ONNX (for this engine, via transformers.js) and as
 * GGUF with the very same weights (for wllama / llama.cpp): the generated random-weight models
 * (scripts/models writes gguf/model-f32.gguf beside onnx/) and TinyStories-656K (../shared/models,
 * converted by hand, see its README).
 *
 * The two generated Llama models also have quantized GGUFs (scripts/models/gguf-quant.ts): Q4_0 with
 * exactly the nibbles and scales of onnx/model_q4.onnx, Q8_0 with exactly the int8 weights and scales
 * of onnx/model_quantized.onnx; the peer compares each engine dtype with the GGUF of the same weights.
 */

/** The engine dtypes the peer compares, each with its GGUF. */
export type PeerDtype = 'fp32' | 'q4' | 'q8';
export const PEER_DTYPES: readonly PeerDtype[] = ['fp32', 'q4', 'q8'];
/** The GGUF of each dtype in a generated Llama model (fp32: PeerModel.gguf). */
export const QUANT_GGUF: Readonly<Record<Exclude<PeerDtype, 'fp32'>, string>> = { q4: 'gguf/model-q4_0.gguf', q8: 'gguf/model-q8_0.gguf' };
/** llama.cpp's name of the GGUF's weight type per dtype, for tables. */
export const GGUF_TYPE: Readonly<Record<PeerDtype, string>> = { fp32: 'F32', q4: 'Q4_0', q8: 'Q8_0' };
export interface PeerModel {
  /** Folder name under /models/ (the id transformers.js loads). */
  readonly name: string;
  /** GGUF path inside the folder (the f32 one). */
  readonly gguf: string;
  /** The dtypes with a GGUF of the same weights: fp32 always, q4 and q8 for the generated Llama models. */
  readonly dtypes: readonly PeerDtype[];
  /** Whether the engine's encode() adds special tokens (BOS) — llama.cpp must then add the same. */
  readonly addSpecialTokens: boolean;
  /** Context length both runtimes are configured with (≥ 400-token prompt + 64 tokens). */
  readonly nCtx: number;
  /** The greedy agreement prompt. */
  readonly greedyPrompt: string;
  /** Strings whose tokenization is compared. */
  readonly strings: readonly string[];
  /** Prose repeated into the ~400-token benchmark prompt. */
  readonly benchText: string;
}

const PROSE =
  'Once upon a time there was a small town by the sea. Every morning the baker made bread, the teacher opened the school, ' +
  'and a young girl walked to the harbour to watch the boats. She counted them one by one, and some days there were more ' +
  'boats than others. Why do the boats leave so early, she asked an old fisherman. Because the fish are hungry in the ' +
  'morning, he said, and he laughed. She did not know if that was true, but she liked the answer.';

/** ASCII-only strings with contractions, digits, punctuation runs, spaces and newlines. */
const ASCII_STRINGS = [
  'Once upon a time, a little dog',
  'The quick brown fox jumps over the lazy dog.',
  "I don't think it's true; they'll say we've won, won't they?",
  'Numbers: 7, 42, 2024 and 1234567890.',
  'Spaces   between\twords\n\nand new lines.\n',
  'Is the sky blue? Yes!!! Is fire cold?? No...',
  '{"decision": "yes", "confidence": 0.9}',
  '   leading and trailing spaces   ',
];

/**
 * TinyStories-656K's vocabulary has 78 characters and no byte tokens: llama.cpp rejects text with
 * any other character (tab, braces, é, …), where transformers.js maps it to <unk>. Same kinds of
 * cases, within its alphabet.
 */
const TINYSTORIES_STRINGS = [
  'Once upon a time, a little dog',
  'The quick brown fox jumps over the lazy dog.',
  "I don't think it's true; they'll say we've won, won't they?",
  'Numbers: 7, 42, 2024 and 1234567890.',
  'Spaces   between words\n\nand new lines.\n',
  'Is the sky blue? Yes!!! Is fire cold?? No...',
  '"Yes," said Lily. "I want to play!" <3 | _',
  '   leading and trailing spaces   ',
];

/** Byte-level BPE (gpt2 tokenizer model): any UTF-8 text, special tokens in text, non-ASCII letters. */
const BYTE_LEVEL_STRINGS = [
  ...ASCII_STRINGS,
  '<|im_start|>user\nIs water wet?<|im_end|>\n<|im_start|>assistant\n',
  'Café naïve résumé — déjà vu',
  'Emoji 🙂 and 日本語 and Ελληνικά',
  "it's IT'S It'S",
];

/**
 * tiny-random-llama's greedy prompt: with 1,024 ids, 128 of them single bytes ≥ 0x80, its top-k
 * often holds a partial UTF-8 piece, which wllama cannot return as a logprob (check-wllama.ts); after
 * this prompt the top-1 never is one for 24 steps, so log-probs are compared at every step.
 */
export const TINY_CHAT_PROMPT = '<|im_start|>user\nIs water wet?<|im_end|>\n<|im_start|>assistant\n';

export const CHAT_PROMPT = '<|im_start|>system\nYou are a helpful AI assistant.<|im_end|>\n<|im_start|>user\nIs the sky blue? Answer yes or no.<|im_end|>\n<|im_start|>assistant\n';

/** Llama 3's chat format (BOS comes from encode / llama.cpp's add_bos). */
export const LLAMA3_CHAT_PROMPT =
  '<|start_header_id|>system<|end_header_id|>\n\nYou are a helpful AI assistant.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n' +
  'Is the sky blue? Answer yes or no.<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n';

/**
 * Phi-3.5's chat format (no BOS: add_bos_token false). With 256 byte tokens in 32,064 ids, a byte
 * (partial UTF-8 piece, which wllama cannot return as a logprob) can rank first; after this prompt
 * none does for 24 steps, so log-probs are compared at every step (with a system turn, one did).
 */
export const PHI3_CHAT_PROMPT = '<|user|>\nIs fire cold? Answer yes or no.<|end|>\n<|assistant|>\n';

/** Gemma 3's chat format (BOS comes from encode / llama.cpp's add_bos; no system role). */
export const GEMMA3_CHAT_PROMPT = '<start_of_turn>user\nIs the sky blue? Answer yes or no.<end_of_turn>\n<start_of_turn>model\n';

/**
 * SentencePiece with byte fallback (Gemma 3): any UTF-8 text; its turn markers; runs of spaces, tabs
 * and newlines, which Gemma holds as added (user-defined) tokens that llama.cpp splits out of the text.
 */
const GEMMA3_STRINGS = [
  ...ASCII_STRINGS,
  '<start_of_turn>user\nIs water wet?<end_of_turn>\n<start_of_turn>model\n',
  'Café naïve résumé — déjà vu',
  'Emoji 🙂 and 日本語 and Ελληνικά',
  'Indented:\n\tone\n\t\ttwo\n    four spaces\n\n\nthree newlines',
];

/** The family models (scripts/models/families.ts) that have a GGUF (scripts/models/gguf-family.ts). */
const familyPeer = (name: string, greedyPrompt: string, strings: readonly string[] = BYTE_LEVEL_STRINGS): PeerModel => ({
  name,
  gguf: 'gguf/model-f32.gguf',
  dtypes: ['fp32'],
  addSpecialTokens: true,
  nCtx: 1024,
  greedyPrompt,
  strings,
  benchText: PROSE,
});

export const PEER_MODELS: Readonly<Record<string, PeerModel>> = {
  'tiny-random-qwen2': familyPeer('tiny-random-qwen2', CHAT_PROMPT),
  'tiny-random-qwen3': familyPeer('tiny-random-qwen3', CHAT_PROMPT),
  'tiny-random-llama3': familyPeer('tiny-random-llama3', LLAMA3_CHAT_PROMPT),
  'tiny-random-phi3': familyPeer('tiny-random-phi3', PHI3_CHAT_PROMPT),
  'tiny-random-gemma3': familyPeer('tiny-random-gemma3', GEMMA3_CHAT_PROMPT, GEMMA3_STRINGS),
  'tiny-random-llama': {
    name: 'tiny-random-llama',
    gguf: 'gguf/model-f32.gguf',
    dtypes: PEER_DTYPES,
    addSpecialTokens: true,
    nCtx: 1024,
    greedyPrompt: TINY_CHAT_PROMPT,
    strings: BYTE_LEVEL_STRINGS,
    benchText: PROSE,
  },
  'smollm2-135m-random': {
    name: 'smollm2-135m-random',
    gguf: 'gguf/model-f32.gguf',
    dtypes: PEER_DTYPES,
    addSpecialTokens: true,
    nCtx: 1024,
    greedyPrompt: CHAT_PROMPT,
    strings: BYTE_LEVEL_STRINGS,
    benchText: PROSE,
  },
  'TinyStories-656K': {
    name: 'TinyStories-656K',
    gguf: 'gguf/model-f32.gguf',
    dtypes: ['fp32'],
    addSpecialTokens: true,
    nCtx: 512,
    greedyPrompt: 'Once upon a time, a little dog',
    strings: TINYSTORIES_STRINGS,
    benchText: PROSE,
  },
};

export function peerModel(name: string): PeerModel {
  const m = PEER_MODELS[name];
  if (!m) throw new Error(`unknown peer model ${name}; known: ${Object.keys(PEER_MODELS).join(', ')}`);
  return m;
}

/** The GGUF of `dtype` inside the model folder; throws when the model has none. */
export function ggufFile(m: PeerModel, dtype: PeerDtype = 'fp32'): string {
  if (!m.dtypes.includes(dtype)) throw new Error(`${m.name} has no ${GGUF_TYPE[dtype]} GGUF (dtypes with one: ${m.dtypes.join(', ')})`);
  return dtype === 'fp32' ? m.gguf : QUANT_GGUF[dtype];
}

export const ggufUrl = (m: PeerModel, dtype: PeerDtype = 'fp32') => `/models/${m.name}/${ggufFile(m, dtype)}`;
