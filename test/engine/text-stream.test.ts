/**
 * TextStream: deltas, stop sequences held back and cut, and the items (logprob entries) held back
 * with their text and dropped at and after a stop; with a fake decoder (one token, one piece).
 */
import { describe, expect, it } from 'vitest';
import { TextStream } from '../../src/engine/chat/text-stream.ts';

/** Runs tokens through a TextStream over a fake vocabulary; every token carries its own index as item. */
function run(pieces: string[], stops: string[]) {
  const stream = new TextStream<number>((ids) => ids.map((i) => pieces[i]!).join(''), stops);
  const ids: number[] = [];
  const chunks: { text: string; items: number[] }[] = [];
  for (let i = 0; i < pieces.length; i++) {
    ids.push(i);
    chunks.push(stream.update(ids, i));
    if (stream.stopped) break;
  }
  chunks.push(stream.flush());
  return { text: stream.text, stopped: stream.stopped, chunks, joined: chunks.map((c) => c.text).join(''), items: chunks.flatMap((c) => c.items) };
}

describe('TextStream', () => {
  it('without stops: every piece at once, with its item', () => {
    const r = run(['Once', ' upon', ' a', ' time'], []);
    expect(r.chunks.slice(0, 4)).toEqual([{ text: 'Once', items: [0] }, { text: ' upon', items: [1] }, { text: ' a', items: [2] }, { text: ' time', items: [3] }]);
    expect(r.text).toBe('Once upon a time');
  });

  it('a stop token spelled out of pieces: text and items end before it', () => {
    const pieces = ['The', ' end', '.', '<|', 'end', '_', 'story', '|>', ' more'];
    const r = run(pieces, ['<|end_story|>']);
    expect(r.stopped).toBe(true);
    expect(r.text).toBe('The end.');
    expect(r.joined).toBe('The end.');
    expect(r.items).toEqual([0, 1, 2]);
    // "<|", "end", "_", "story" were held back (they could have been the stop's start)...
    expect(r.chunks.slice(3, 7).map((c) => c.text)).toEqual(['', '', '', '']);
    expect(r.chunks.slice(3, 7).flatMap((c) => c.items)).toEqual([]);
  });

  it('held text that turns out not to be a stop is released with its items, in order', () => {
    const r = run(['a', '<|', 'end', 'ing', ' b'], ['<|end_story|>']);
    expect(r.stopped).toBe(false);
    expect(r.chunks.map((c) => c.text)).toEqual(['a', '', '', '<|ending', ' b', '']);
    expect(r.chunks.map((c) => c.items)).toEqual([[0], [], [], [1, 2, 3], [4], []]);
  });

  it('a token that straddles the stop keeps its entry (its text is partly shown); tokens after it are dropped', () => {
    const r = run(['x', 'y<|en', 'd_story|>z', 'w'], ['<|end_story|>']);
    expect(r.text).toBe('xy');
    expect(r.items).toEqual([0, 1]);
  });

  it('a stop inside one token: that token begins before the stop and keeps its entry', () => {
    const r = run(['ab', 'cSTOPd', 'e'], ['STOP']);
    expect(r.text).toBe('abc');
    expect(r.items).toEqual([0, 1]);
    const atStart = run(['ab', 'STOPd', 'e'], ['STOP']);
    expect(atStart.text).toBe('ab');
    expect(atStart.items).toEqual([0]);
  });

  it('held at the end of generation: flushed with its items', () => {
    const r = run(['a', '<|end'], ['<|end_story|>']);
    expect(r.chunks.at(-1)).toEqual({ text: '<|end', items: [1] });
    expect(r.items).toEqual([0, 1]);
  });

  it('a multi-byte character split over tokens: held as U+FFFD until whole, the items with it', () => {
    // Token 1 alone decodes to U+FFFD; with token 2 the pair decodes to "é".
    const stream = new TextStream<number>((ids) => (ids.length === 1 ? 'h' : ids.length === 2 ? 'h\uFFFD' : 'hé!'), []);
    expect(stream.update([0], 0)).toEqual({ text: 'h', items: [0] });
    expect(stream.update([0, 1], 1)).toEqual({ text: '', items: [] });
    expect(stream.update([0, 1, 2], 2)).toEqual({ text: 'é!', items: [1, 2] });
  });
});
