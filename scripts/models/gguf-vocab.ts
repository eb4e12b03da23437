/**
 * The real tokenizer of a family model in GGUF form, as convert_hf_to_gguf.py writes it
 * (`TextModel.get_vocab_base` + `gguf.SpecialVocab`), from the model's own tokenizer.json and
 * tokenizer_config.json (the files written beside the ONNX graph):
 *
 *   tokens      id order, `vocab_size` of them: ids the tokenizer lacks become `[PAD<id>]` (UNUSED);
 *   token_type  added tokens: CONTROL when `special` or when they look special (`<|…|>`, `<pad>`,
 *               `<unused…>`, …), else USER_DEFINED (their text pre-normalised: `▁` → space);
 *               the rest NORMAL (byte-level BPE, `gpt2`; SentencePiece BPE: see spmGgufVocab);
 *   merges      `a b`, in rank order;
 *   special ids bos/eos/unk/pad from tokenizer_config.json's `*_token` (content → id), then
 *               config.json's `*_token_id` for those still missing;
 *   add_bos/eos tokenizer_config.json's `add_bos_token` / `add_eos_token`, else whether
 *               tokenizer.json's TemplateProcessing post-processor puts the token around `$A`;
 *   chat_template tokenizer_config.json's `chat_template`.
 */
import { type GgufValue, gguf } from './gguf.ts';
import { TOKEN_TYPE } from './gguf-llama.ts';

interface AddedToken {
  id: number;
  content: string;
  special: boolean;
  normalized: boolean;
}
interface TokenizerJson {
  model: { type: string; vocab: Record<string, number>; merges: (string | [string, string])[] };
  added_tokens: AddedToken[];
  post_processor?: unknown;
}
type TokenizerConfig = Record<string, unknown>;

export type GgufPreTokenizer = 'qwen2' | 'llama-bpe';

/** convert_hf_to_gguf.py `does_token_look_special`. */
export function looksSpecial(text: string): boolean {
  return (
    ['<pad>', '<mask>', '<2mass>', '[@BOS@]'].includes(text) ||
    (text.startsWith('<|') && text.endsWith('|>')) ||
    (text.startsWith('<｜') && text.endsWith('｜>')) ||
    (text.startsWith('<unused') && text.endsWith('>'))
  );
}

function tokenContent(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && typeof (v as { content?: unknown }).content === 'string') return (v as { content: string }).content;
  return null;
}

/** Whether a TemplateProcessing post-processor (possibly inside a Sequence) adds `content` before / after `$A`. */
function templateAdds(post: unknown, content: string, where: 'before' | 'after'): boolean | undefined {
  if (!post || typeof post !== 'object') return undefined;
  const p = post as { type?: string; processors?: unknown[]; single?: unknown[] };
  if (p.type === 'Sequence') {
    for (const q of p.processors ?? []) {
      const r = templateAdds(q, content, where);
      if (r !== undefined) return r;
    }
    return undefined;
  }
  if (p.type !== 'TemplateProcessing' || !Array.isArray(p.single)) return undefined;
  const items = p.single.map((it) => {
    const o = it as { SpecialToken?: { id: string }; Sequence?: { id: string } };
    return o.SpecialToken ? o.SpecialToken.id : o.Sequence ? '$A' : '';
  });
  const a = items.indexOf('$A');
  const at = items.indexOf(content);
  if (at < 0) return false;
  return where === 'before' ? at < a : at > a;
}

/**
 * GGUF tokenizer metadata of a byte-level BPE family (Qwen2.5, Qwen3, Llama 3): tokenizer model
 * `gpt2`, the given pre-tokenizer name. `config` is the model's config.json (fallback special ids).
 */
export function bpeGgufVocab(
  tokenizerJson: Buffer,
  tokenizerConfig: Buffer,
  config: Record<string, unknown>,
  vocabSize: number,
  pre: GgufPreTokenizer,
): [string, GgufValue][] {
  const tok = JSON.parse(tokenizerJson.toString('utf8')) as TokenizerJson;
  const cfg = JSON.parse(tokenizerConfig.toString('utf8')) as TokenizerConfig;
  if (tok.model.type !== 'BPE') throw new Error(`tokenizer.json: model.type ${tok.model.type}, expected BPE`);
  const tokens: string[] = new Array(vocabSize);
  const types: number[] = new Array(vocabSize);
  for (const [text, id] of Object.entries(tok.model.vocab)) {
    if (id >= vocabSize) throw new Error(`tokenizer.json: token id ${id} ≥ vocab_size ${vocabSize}`);
    tokens[id] = text;
    types[id] = TOKEN_TYPE.NORMAL;
  }
  const idOf = new Map<string, number>(Object.entries(tok.model.vocab));
  for (const a of tok.added_tokens) {
    if (a.id >= vocabSize) throw new Error(`tokenizer.json: added token id ${a.id} ≥ vocab_size ${vocabSize}`);
    // byte-level added tokens decode to themselves; `normalized` ones would need the round trip
    const special = a.special || looksSpecial(a.content);
    tokens[a.id] = special ? a.content : a.content.replaceAll('\u2581', ' ');
    types[a.id] = special ? TOKEN_TYPE.CONTROL : TOKEN_TYPE.USER_DEFINED;
    idOf.set(a.content, a.id);
  }
  for (let i = 0; i < vocabSize; i++) {
    if (tokens[i] === undefined) {
      tokens[i] = `[PAD${i}]`;
      types[i] = TOKEN_TYPE.UNUSED;
    }
  }
  const merges = tok.model.merges.map((m) => (typeof m === 'string' ? m : `${m[0]} ${m[1]}`));

  const out: [string, GgufValue][] = [
    ['tokenizer.ggml.model', gguf.str('gpt2')],
    ['tokenizer.ggml.pre', gguf.str(pre)],
    ['tokenizer.ggml.tokens', gguf.strs(tokens)],
    ['tokenizer.ggml.token_type', gguf.i32s(types)],
    ['tokenizer.ggml.merges', gguf.strs(merges)],
  ];
  out.push(...specialEntries(tok, cfg, config, idOf));
  return out;
}

/**
 * GGUF tokenizer metadata of a SentencePiece-BPE family (Phi-3.5): tokenizer model `llama` (SPM),
 * as `Phi3MiniModel.set_vocab` writes it — `vocab_size` slots starting as `[PAD<id>]` (UNUSED,
 * score -10000); the base pieces (`<0xXX>` → BYTE, the rest NORMAL); every added token of
 * tokenizer.json → score -1000, CONTROL when `special`, else USER_DEFINED; special ids and
 * add_bos/add_eos as for BPE.
 *
 * Scores: the converter copies them from tokenizer.model, which is not shipped here (only the
 * Hugging Face tokenizer.json). SentencePiece's BPE merges the adjacent pair whose merged piece
 * scores highest; the Hugging Face conversion lists merges in that same order. So a piece's score
 * is minus the rank of the first merge that forms it; pieces no merge forms get -1e9 (llama.cpp
 * still merges them, but after everything else).
 *
 * `gemma` (Gemma3Model.set_vocab → `_create_vocab_sentencepiece`, then add_space_prefix false):
 * added tokens past `vocab_size` are skipped; those that are not special and do not look special
 * (`\n\n`, `▁▁`, `\t`, HTML tags, …) are USER_DEFINED with `▁` written as a space (llama.cpp then
 * splits them out of the raw text), the rest CONTROL.
 */
export function spmGgufVocab(
  tokenizerJson: Buffer,
  tokenizerConfig: Buffer,
  config: Record<string, unknown>,
  vocabSize: number,
  gemma = false,
): [string, GgufValue][] {
  const tok = JSON.parse(tokenizerJson.toString('utf8')) as TokenizerJson;
  const cfg = JSON.parse(tokenizerConfig.toString('utf8')) as TokenizerConfig;
  if (tok.model.type !== 'BPE') throw new Error(`tokenizer.json: model.type ${tok.model.type}, expected BPE`);
  const tokens: string[] = Array.from({ length: vocabSize }, (_, i) => `[PAD${i}]`);
  const scores: number[] = new Array(vocabSize).fill(-10000);
  const types: number[] = new Array(vocabSize).fill(TOKEN_TYPE.UNUSED);
  const rank = new Map<string, number>();
  tok.model.merges.forEach((m, r) => {
    const [a, b] = typeof m === 'string' ? (m.split(' ') as [string, string]) : m;
    if (!rank.has(a + b)) rank.set(a + b, r);
  });
  const idOf = new Map<string, number>();
  for (const [text, id] of Object.entries(tok.model.vocab)) {
    if (id >= vocabSize) throw new Error(`tokenizer.json: token id ${id} ≥ vocab_size ${vocabSize}`);
    tokens[id] = text;
    const r = rank.get(text);
    scores[id] = r === undefined ? ([...text].length === 1 ? 0 : -1e9) : -r;
    types[id] = /^<0x[0-9A-F]{2}>$/.test(text) ? TOKEN_TYPE.BYTE : TOKEN_TYPE.NORMAL;
    idOf.set(text, id);
  }
  for (const a of tok.added_tokens) {
    if (a.id >= vocabSize) {
      // Gemma 3's <image_soft_token> (262144) lies past the text model's vocabulary: the converter skips it
      if (gemma) continue;
      throw new Error(`tokenizer.json: added token id ${a.id} ≥ vocab_size ${vocabSize}`);
    }
    scores[a.id] = -1000;
    idOf.set(a.content, a.id);
    if (!gemma) {
      tokens[a.id] = a.content;
      types[a.id] = a.special ? TOKEN_TYPE.CONTROL : TOKEN_TYPE.USER_DEFINED;
      continue;
    }
    // TextModel._create_vocab_sentencepiece's added_tokens_decoder pass (Gemma3Model.set_vocab)
    const special = a.special || looksSpecial(a.content);
    tokens[a.id] = special ? a.content : a.content.replaceAll('\u2581', ' ');
    types[a.id] = special ? TOKEN_TYPE.CONTROL : TOKEN_TYPE.USER_DEFINED;
  }
  return [
    ['tokenizer.ggml.model', gguf.str('llama')],
    ['tokenizer.ggml.pre', gguf.str('default')],
    ['tokenizer.ggml.tokens', gguf.strs(tokens)],
    ['tokenizer.ggml.scores', gguf.f32s(scores)],
    ['tokenizer.ggml.token_type', gguf.i32s(types)],
    // Gemma's normalizer only replaces spaces by ▁: no ▁ in front of the text
    ...(gemma ? ([['tokenizer.ggml.add_space_prefix', gguf.bool(false)]] as [string, GgufValue][]) : []),
    ...specialEntries(tok, cfg, config, idOf),
  ];
}

/** bos/eos/unk/pad ids, add_bos/add_eos and the chat template (gguf.SpecialVocab). */
function specialEntries(tok: TokenizerJson, cfg: TokenizerConfig, config: Record<string, unknown>, idOf: ReadonlyMap<string, number>): [string, GgufValue][] {
  const out: [string, GgufValue][] = [];
  for (const typ of ['bos', 'eos', 'unk', 'pad'] as const) {
    const content = tokenContent(cfg[`${typ}_token`]);
    let id = content !== null ? idOf.get(content) : undefined;
    if (id === undefined) {
      const fromConfig = config[`${typ}_token_id`];
      const first = Array.isArray(fromConfig) ? fromConfig[0] : fromConfig;
      if (typeof first === 'number') id = first;
    }
    if (id !== undefined) out.push([`tokenizer.ggml.${typ === 'pad' ? 'padding' : typ === 'unk' ? 'unknown' : typ}_token_id`, gguf.u32(id)]);
  }
  for (const [typ, where] of [
    ['bos', 'before'],
    ['eos', 'after'],
  ] as const) {
    let add = cfg[`add_${typ}_token`];
    if (typeof add !== 'boolean') {
      const content = tokenContent(cfg[`${typ}_token`]);
      add = content !== null ? templateAdds(tok.post_processor, content, where) : undefined;
    }
    if (typeof add === 'boolean') out.push([`tokenizer.ggml.add_${typ}_token`, gguf.bool(add)]);
  }
  const template = cfg['chat_template'];
  if (typeof template === 'string') out.push(['tokenizer.chat_template', gguf.str(template)]);
  return out;
}
