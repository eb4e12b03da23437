/**
 * GPT-2's byte-to-character map, inverted: the byte a character of a byte-level token stands for
 * (-1: none). Byte-level vocabularies (GPT-2, Llama 3, Qwen) write each byte as one printable
 * character; the UTF-8 mask (token-utf8.ts) and the extraction's token bytes
 * (extraction/token-bytes.ts) both read tokens back to bytes with it.
 */
export const BYTE_OF_CHAR: Int16Array = (() => {
  const printable = (b: number) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const map = new Int16Array(512).fill(-1);
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (printable(b)) map[b] = b;
    else map[256 + n++] = b;
  }
  return map;
})();
