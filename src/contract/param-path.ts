/**
 * The `param` of an error: a path into the request body, written as in JavaScript. Array
 * indices are `[3]`; a key that is a plain name (letters, digits, `_`, `$`, `-`, not starting
 * with a digit or `-`) is `.key`; any other key is quoted: `["très bien"]`, `["1"]`, `[""]`.
 * So `questions.mood.criteria[3]` and `questions["is it spam?"].type` both resolve unambiguously.
 */

export type PathSegment = string | number;
export type Path = readonly PathSegment[];

const plainName = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

export function formatParam(path: Path): string | null {
  if (path.length === 0) return null;
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (plainName.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

/** Reads the value at `path` in `root`, touching only own properties (no prototype lookups). */
export function valueAt(root: unknown, path: Path): { found: boolean; value: unknown } {
  let cur: unknown = root;
  for (const seg of path) {
    if (typeof cur !== 'object' || cur === null) return { found: false, value: undefined };
    const key = typeof seg === 'number' ? String(seg) : seg;
    if (!Object.hasOwn(cur, key)) return { found: false, value: undefined };
    cur = (cur as Record<string, unknown>)[key];
  }
  return { found: true, value: cur };
}

/** Converts a zod issue path (which may hold symbols) to ours. */
export function toPath(path: readonly PropertyKey[]): PathSegment[] {
  return path.map((seg) => (typeof seg === 'symbol' ? String(seg) : seg));
}
