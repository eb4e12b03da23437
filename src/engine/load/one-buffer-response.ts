/**
 * A Response over a one-buffer body (one-buffer-body.ts) whose whole-body reads (`arrayBuffer`,
 * `bytes`, `text`, `json`, `blob`) copy each view as it is read.
 *
 * A one-buffer body releases its buffer once the reader has taken the last view, which is right
 * only for a reader that copies each view before it reads the next: transformers.js' progress
 * reader does, and so does Chromium's own `arrayBuffer()`. Node's (undici's) keeps the views and
 * joins them after the end, by which time the buffer is released: "Cannot perform
 * %TypedArray%.prototype.set on a detached ArrayBuffer" (a tokenizer read over HTTP in Node, which
 * transformers.js reads with `arrayBuffer()` when it is given no progress callback). These reads
 * take the bytes out view by view instead, as Chromium's do, in every runtime.
 */
export class OneBufferResponse extends Response {
  override async arrayBuffer(): Promise<ArrayBuffer> {
    if (this.bodyUsed) throw new TypeError('Body has already been consumed.');
    if (!this.body) return new ArrayBuffer(0);
    const announced = Number(this.headers.get('content-length'));
    let out = new Uint8Array(Number.isSafeInteger(announced) && announced > 0 ? announced : 0);
    let filled = 0;
    const reader = this.body.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      const view = r.value;
      if (filled + view.byteLength > out.byteLength) {
        const bigger = new Uint8Array(Math.max(out.byteLength * 2, filled + view.byteLength));
        bigger.set(out.subarray(0, filled));
        out = bigger;
      }
      out.set(view, filled);
      filled += view.byteLength;
    }
    return filled === out.byteLength ? out.buffer : out.buffer.slice(0, filled);
  }

  override async bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return new Uint8Array(await this.arrayBuffer());
  }

  override async text(): Promise<string> {
    return new TextDecoder().decode(await this.arrayBuffer());
  }

  override async json(): Promise<any> {
    return JSON.parse(await this.text()) as unknown;
  }

  override async blob(): Promise<Blob> {
    return new Blob([await this.arrayBuffer()], { type: this.headers.get('content-type') ?? '' });
  }
}
