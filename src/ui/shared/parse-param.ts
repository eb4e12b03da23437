import type { PathSegment } from '../../contract/index.ts';

/**
 * Reads an error's `param` back into path segments: the inverse of the contract's `formatParam`
 * (`questions.mood.criteria[3]`, `questions["is it spam?"].type`). Returns [] for null or for a
 * string it cannot read.
 */
export function parseParam(param: string | null | undefined): PathSegment[] {
  if (!param) return [];
  const out: PathSegment[] = [];
  let i = 0;
  const name = /^[A-Za-z_$][A-Za-z0-9_$-]*/;
  while (i < param.length) {
    const rest = param.slice(i);
    if (rest.startsWith('.')) {
      i += 1;
      continue;
    }
    if (rest.startsWith('[')) {
      const index = /^\[(\d+)\]/.exec(rest);
      if (index) {
        out.push(Number(index[1]));
        i += index[0].length;
        continue;
      }
      const quoted = /^\[("(?:[^"\\]|\\.)*")\]/.exec(rest);
      if (!quoted) return [];
      out.push(JSON.parse(quoted[1]!) as string);
      i += quoted[0].length;
      continue;
    }
    const plain = name.exec(rest);
    if (!plain) return [];
    out.push(plain[0]);
    i += plain[0].length;
  }
  return out;
}
