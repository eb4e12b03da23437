/**
 * A stop token never shows in a reply (issue 29, item 7): a model may spell its stop token's text
 * out of ordinary tokens (TinyStories-656K ends its stories with `<|end_story|>` written piece by
 * piece, which no id check sees). The text of every stop token is a stop sequence too: the
 * content, the deltas and the logprobs all end before it, for every family's stop list.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChatCompletion, ChatCompletionChunk } from '../../src/contract/index.ts';
import { stopTokenIds, stopTokenTexts } from '../../src/engine/chat/stop-tokens.ts';
import { TextStream } from '../../src/engine/chat/text-stream.ts';
import { GENERATED, loadEngine, TINYSTORIES, VENDORED } from '../support/models.ts';

const FAMILIES: [string, string[]][] = [
  ['tiny-random-qwen2', ['<|im_end|>', '<|endoftext|>']],
  ['tiny-random-qwen3', ['<|im_end|>', '<|endoftext|>']],
  ['tiny-random-llama3', ['<|eot_id|>', '<|end_of_text|>', '<|eom_id|>']],
  ['tiny-random-phi3', ['<|endoftext|>', '<|end|>']],
  ['tiny-random-gemma3', ['<eos>', '<end_of_turn>']],
];

describe.skipIf(!existsSync(join(VENDORED, TINYSTORIES, 'onnx', 'model.onnx')))('TinyStories-656K spells <|end_story|> out', () => {
  it('the reply, its deltas and its logprobs end before it', async () => {
    const engine = await loadEngine(VENDORED, TINYSTORIES);
    const chunks: ChatCompletionChunk[] = [];
    const body = { model: 'jev', messages: [{ role: 'user', content: 'Once upon a time' }], temperature: 0, max_tokens: 300, logprobs: true, stream: true };
    const res = (await engine.chat(body, { id: 'ts' }, (c) => void chunks.push(c))) as ChatCompletion;
    const content = res.choices[0]!.message.content!;
    const entries = res.choices[0]!.logprobs!.content;
    expect(res.choices[0]!.finish_reason).toBe('stop');
    expect(content).not.toContain('<|');
    expect(content.length).toBeGreaterThan(100);
    // The story ended in the spelled-out stop token: its pieces were generated, and dropped.
    expect(res.usage.completion_tokens).toBeGreaterThan(entries.length);
    expect(entries.some((e) => e.token.includes('<|') || e.token.includes('story'))).toBe(false);
    // Token by token, SentencePiece drops a piece's leading space: compare without spaces.
    expect(entries.map((e) => e.token).join('').replace(/\s/g, '')).toBe(content.replace(/\s/g, ''));
    const deltas = chunks.map((c) => c.choices[0]?.delta.content ?? '');
    expect(deltas.join('')).toBe(content);
    expect(deltas.some((d) => d.includes('<|'))).toBe(false);
    expect(chunks.flatMap((c) => c.choices[0]?.logprobs?.content ?? [])).toEqual(entries);
  });
});

describe('every family: a stop token spelled out of ordinary tokens ends the text', () => {
  for (const [family, texts] of FAMILIES) {
    it.skipIf(!existsSync(join(GENERATED, family, 'onnx', 'model.onnx')))(family, async () => {
      const engine = await loadEngine(GENERATED, family);
      const lm = engine.languageModel!;
      const stops = stopTokenTexts(lm, stopTokenIds(lm));
      for (const text of texts) expect(stops).toContain(text);
      for (const stop of stops) {
        // "Hi there", then the stop's text one character a token (ordinary tokens), then more.
        const vocab = (lm.tokenizer as unknown as { _tokenizer: { model: { vocab: string[] } } })._tokenizer.model.vocab;
        const charId = (c: string) => {
          const id = vocab.indexOf(c);
          expect(id, `a token for ${JSON.stringify(c)}`).toBeGreaterThanOrEqual(0);
          return [id];
        };
        const pieces = [lm.encode('Hi there', false), ...[...stop].map(charId), lm.encode(' more', false)];
        for (const ids of pieces) for (const id of ids) expect(stopTokenIds(lm).has(id), `${stop} in pieces`).toBe(false);
        const stream = new TextStream<number>((ids) => lm.tokenizer.decode(ids, { skip_special_tokens: true }), stops);
        const ids: number[] = [];
        let shown = '';
        const items: number[] = [];
        for (const id of pieces.flat()) {
          ids.push(id);
          const out = stream.update(ids, id);
          shown += out.text;
          items.push(...out.items);
          if (stream.stopped) break;
        }
        shown += stream.flush().text;
        expect(stream.stopped, stop).toBe(true);
        expect(shown.trim(), stop).toBe('Hi there');
        expect(items, stop).toEqual(pieces[0]);
      }
    });
  }
});
