/**
 * Whole-body reads of a one-buffer body (src/engine/load/one-buffer-response.ts). The body releases
 * its buffer once its last view is read; Node's own `Response.arrayBuffer()` keeps the views and
 * joins them after the end, so over such a body it fails on the released buffer (the cause of
 * `jev-local serve --host http://…` failing with "Cannot perform %TypedArray%.prototype.set on a
 * detached ArrayBuffer"). OneBufferResponse's reads return the bytes sent, from the network's
 * body (modelFetch) and from the store's (bufferBody), whatever the chunking.
 */
import { describe, expect, it } from 'vitest';
import { bufferBody, oneBufferBody, VIEW_BYTES } from '../../src/engine/load/one-buffer-body.ts';
import { modelFetch } from '../../src/engine/load/model-fetch.ts';
import { OneBufferResponse } from '../../src/engine/load/one-buffer-response.ts';
import { byteSource, pattern } from '../support/byte-source.ts';

const SIZE = 2 * VIEW_BYTES + 123;

describe('OneBufferResponse', () => {
  it("is needed: Node's Response.arrayBuffer over a one-buffer body meets a released buffer", async () => {
    const bytes = pattern(SIZE);
    const plain = new Response(oneBufferBody(byteSource(bytes, [65_536]).stream, SIZE));
    await expect(plain.arrayBuffer()).rejects.toThrow(/detached/);
  });

  it('reads the bytes sent whole, as arrayBuffer, bytes, text and json, from a network body and a stored one', async () => {
    const bytes = pattern(SIZE);
    for (const chunk of [1000, 65_536, SIZE]) {
      const got = new Uint8Array(await new OneBufferResponse(oneBufferBody(byteSource(bytes, [chunk]).stream, SIZE), { headers: { 'content-length': String(SIZE) } }).arrayBuffer());
      expect(got.byteLength).toBe(SIZE);
      expect(Buffer.compare(got, bytes)).toBe(0);
    }
    // Announced shorter than it is, and not announced: the buffer grows.
    for (const announced of ['10', null]) {
      const r = new OneBufferResponse(oneBufferBody(byteSource(bytes, [4096]).stream, 0), { headers: announced ? { 'content-length': announced } : {} });
      expect(Buffer.compare(new Uint8Array(await r.arrayBuffer()), bytes)).toBe(0);
    }
    const stored = bytes.slice().buffer;
    expect(Buffer.compare(await new OneBufferResponse(bufferBody(stored)).bytes(), bytes)).toBe(0);
    expect(stored.byteLength).toBe(0); // released once read
    const json = { tokenizer: 'x'.repeat(VIEW_BYTES), n: [1, 2, 3], text: 'café 日本語' };
    const encoded = new TextEncoder().encode(JSON.stringify(json));
    expect(await new OneBufferResponse(oneBufferBody(byteSource(encoded, [7777]).stream, encoded.byteLength)).json()).toEqual(json);
    expect(await new OneBufferResponse(bufferBody(encoded.slice().buffer)).text()).toBe(JSON.stringify(json));
  });

  it("is what modelFetch answers with, so that a tokenizer read with Node's arrayBuffer() gets its bytes", async () => {
    const bytes = pattern(SIZE);
    const network = async () => new Response(byteSource(bytes, [65_536]).stream, { status: 200, headers: { 'content-length': String(SIZE) } });
    const res = await modelFetch(network, null)('http://host.invalid/m/resolve/main/tokenizer.json');
    expect(res).toBeInstanceOf(OneBufferResponse);
    expect(Buffer.compare(new Uint8Array(await res.arrayBuffer()), bytes)).toBe(0);
  });
});
