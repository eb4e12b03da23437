/**
 * JSON text of any JSON value, written without recursion, so that a body nested 100,000 levels deep
 * can be sent over HTTP (JSON.stringify overflows the stack long before). Same output as
 * JSON.stringify for the values it takes: keys in own-property order, non-finite numbers as null,
 * undefined members left out and undefined items as null.
 */
type Frame = { value: object; keys: string[] | null; next: number };

export function jsonText(root: unknown): string {
  const out: string[] = [];
  const stack: Frame[] = [];
  const scalar = (v: unknown): string | null => {
    if (v === null || v === undefined) return 'null';
    if (typeof v === 'number') return Number.isFinite(v) ? JSON.stringify(v) : 'null';
    if (typeof v === 'string' || typeof v === 'boolean') return JSON.stringify(v);
    return null;
  };
  const open = (v: unknown) => {
    const s = scalar(v);
    if (s !== null) return void out.push(s);
    const keys = Array.isArray(v) ? null : Object.keys(v as object);
    out.push(keys ? '{' : '[');
    stack.push({ value: v as object, keys, next: 0 });
  };
  open(root);
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    const length = top.keys ? top.keys.length : (top.value as unknown[]).length;
    if (top.next >= length) {
      out.push(top.keys ? '}' : ']');
      stack.pop();
      continue;
    }
    const i = top.next++;
    if (top.keys) {
      const k = top.keys[i]!;
      const v = (top.value as Record<string, unknown>)[k];
      if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
      if (out[out.length - 1] !== '{') out.push(',');
      out.push(JSON.stringify(k), ':');
      open(v);
    } else {
      if (i > 0) out.push(',');
      open((top.value as unknown[])[i]);
    }
  }
  return out.join('');
}
