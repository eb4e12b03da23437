/**
 * The matcher's side of a length guard (json-schema/length-guard.ts): the grammar holds a
 * string's pattern, and this keeps its `maxLength`. A tracker reads the reply's JSON as its
 * tokens' bytes arrive (where each string stands: its key path, the keys of the object members it
 * stands in) and, inside a guarded string, its characters so far and its state in the pattern's
 * automaton. A token is ruled out when, after it, the string could no longer end within its
 * bound: its characters so far plus the fewest the automaton still needs to accept exceed `max`,
 * or it closes the string past `max`. Every string the grammar allows that ends within the bound
 * keeps every token of its way, so the language is exactly the pattern's within the bound.
 *
 * Cost: a token is checked only where it is long enough to break a bound (longer than what is left
 * of the room of the guarded string it is in, or of the smallest room of a string it could open):
 * tokens are visited longest first, so that far from a bound a mask costs a few long tokens.
 *
 * A character whose UTF-8 bytes are split across tokens is counted when its first byte arrives and
 * checked when its last does.
 *
 * Tool calls: between calls the tracker reads the text for a call's begin, and from there the
 * call's arguments as JSON with that tool's guards, back to the text when they end.
 */
import type { Dfa } from './json-schema/char-automaton.ts';
import { placeHolds, type GuardPlace, type GuardScope, type LengthGuard } from './json-schema/length-guard.ts';
import { rawTokenBytes } from './token-raw-bytes.ts';
import type { TokenVocabulary } from './token-vocabulary.ts';
import { UTF8_BOUNDARY, UTF8_INVALID, utf8Step } from './token-utf8.ts';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OUT = 0;
const KEY = 1;
const VALUE = 2;

interface Guard {
  max: number;
  /** Per state, the next state on each ASCII character (-1: none). */
  ascii: Int32Array;
  edges: Dfa['edges'];
  /** Per state, the fewest characters that lead to an accepting state (-1: none). */
  dist: Int32Array;
  /** The most characters a string may hold with no token checked: `max` less the largest `dist`. */
  room: number;
}

function guardOf(g: LengthGuard): Guard {
  const n = g.dfa.accept.length;
  const ascii = new Int32Array(n * 128).fill(-1);
  const back: number[][] = Array.from({ length: n }, () => []);
  g.dfa.edges.forEach((edges, q) => {
    for (const e of edges) {
      back[e.to]!.push(q);
      for (const [lo, hi] of e.set) for (let c = lo; c <= Math.min(hi, 127); c++) ascii[q * 128 + c] = e.to;
    }
  });
  const dist = new Int32Array(n).fill(-1);
  const queue: number[] = [];
  g.dfa.accept.forEach((a, q) => a && (dist[q] = 0, queue.push(q)));
  for (let i = 0; i < queue.length; i++) {
    const q = queue[i]!;
    for (const p of back[q]!) if (dist[p]! < 0) (dist[p] = dist[q]! + 1), queue.push(p);
  }
  return { max: g.max, ascii, edges: g.dfa.edges, dist, room: g.max - Math.max(0, ...dist) };
}

function step(g: Guard, q: number, cp: number): number {
  if (q < 0) return -1;
  if (cp < 128) return g.ascii[q * 128 + cp]!;
  for (const e of g.edges[q]!) for (const [lo, hi] of e.set) if (lo <= cp && cp <= hi) return e.to;
  return -1;
}

/**
 * Whether a guarded string of `len` characters, in `state`, can no longer end within its bound.
 * `pending`: the last of them is not whole yet (its UTF-8 bytes, or an escape, still due; `len`
 * counts it, `state` is before it). A state no string of the pattern reaches is the grammar's to
 * rule out.
 */
function outOfReach(g: Guard, len: number, state: number, pending: boolean): boolean {
  if (state < 0) return false;
  const d = g.dist[state]!;
  return d >= 0 && len + (pending ? Math.max(0, d - 1) : d) > g.max;
}

/** A guard, and a key path where it applies. */
interface Placed {
  place: GuardPlace;
  guard: Guard;
}

/** Where guards apply: to the whole reply, or to the arguments after each tool call's begin. */
interface Scopes {
  whole: readonly Placed[] | null;
  calls: readonly { begin: Uint8Array; places: readonly Placed[] }[];
  /** The longest begin's bytes. */
  longest: number;
}

const utf8 = new TextDecoder();
const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/** Where the reply's JSON stands, and inside a guarded string how far it has come. */
export class GuardTracker {
  /** The guards of the JSON being read; null: tool calls' text between calls, read for a call's begin. */
  places: readonly Placed[] | null;
  /** Between calls: the last bytes (as many as the longest begin). */
  recent: number[] = [];
  /** Open containers, innermost last: whether each is an object, and its current member's key. */
  objs: boolean[] = [];
  keys: (string | null)[] = [];
  mode = OUT;
  /** Whether the next string of the innermost object is a key. */
  expectKey = false;
  /** Inside a string: 1 after a backslash, 2–5 reading that many more hex digits of `\u`. */
  esc = 0;
  hex = 0;
  /** A key's raw bytes so far. */
  keyBytes: number[] = [];
  guard: Guard | null = null;
  len = 0;
  state = 0;
  /** Continuation bytes still due for the current character, and its bits so far. */
  need = 0;
  cp = 0;
  broken = false;

  constructor(places: readonly Placed[] | null) {
    this.places = places;
  }

  clone(): GuardTracker {
    const t = new GuardTracker(this.places);
    t.recent = this.places === null ? this.recent.slice() : [];
    t.objs = this.objs.slice();
    t.keys = this.keys.slice();
    t.mode = this.mode;
    t.expectKey = this.expectKey;
    t.esc = this.esc;
    t.hex = this.hex;
    t.keyBytes = this.mode === KEY ? this.keyBytes.slice() : [];
    t.guard = this.guard;
    t.len = this.len;
    t.state = this.state;
    t.need = this.need;
    t.cp = this.cp;
    t.broken = this.broken;
    return t;
  }

  /** The key path of a value string opening now: the keys of the objects it stands in. */
  path(): string[] {
    const path: string[] = [];
    this.objs.forEach((obj, i) => obj && path.push(this.keys[i] ?? ''));
    return path;
  }

  feed(byte: number, scopes: Scopes): void {
    if (this.places === null) this.#between(byte, scopes);
    else if (this.mode === OUT) this.#outside(byte, this.places, scopes);
    else if (this.mode === KEY) this.#key(byte);
    else if (this.guard === null) this.#skip(byte, scopes);
    else this.#value(byte, scopes);
  }

  /** At a token's end: broken where the guarded string can no longer end within its bound. */
  end(): void {
    if (this.mode !== VALUE || this.guard === null) return;
    // An escape begun counts as its character (a character's first byte already did).
    const escaping = this.esc > 0;
    if (outOfReach(this.guard, this.len + (escaping ? 1 : 0), this.state, escaping || this.need > 0)) this.broken = true;
  }

  /** Tool calls' text: a call's begin starts the JSON of its arguments. */
  #between(byte: number, scopes: Scopes): void {
    const recent = this.recent;
    recent.push(byte);
    if (recent.length > scopes.longest) recent.shift();
    for (const call of scopes.calls) {
      const b = call.begin;
      if (b.length === 0 || b[b.length - 1] !== byte || b.length > recent.length) continue;
      let k = 1;
      while (k < b.length && b[b.length - 1 - k] === recent[recent.length - 1 - k]) k++;
      if (k < b.length) continue;
      this.places = call.places;
      this.recent = [];
      this.objs = [];
      this.keys = [];
      this.mode = OUT;
      this.expectKey = false;
      return;
    }
  }

  /** A tool call's arguments have ended: back to the text between calls. */
  #ended(scopes: Scopes): void {
    if (scopes.whole === null && this.objs.length === 0) this.places = null;
  }

  #outside(byte: number, places: readonly Placed[], scopes: Scopes): void {
    // A call's arguments that are a number, true, false or null hold no string.
    if (this.objs.length === 0 && scopes.whole === null && byte !== 0x7b && byte !== 0x5b && byte !== QUOTE && !WHITESPACE.has(byte)) {
      this.places = null;
      return;
    }
    switch (byte) {
      case 0x7b: // {
        this.objs.push(true);
        this.keys.push(null);
        this.expectKey = true;
        return;
      case 0x5b: // [
        this.objs.push(false);
        this.keys.push(null);
        this.expectKey = false;
        return;
      case 0x7d: // }
      case 0x5d: // ]
        this.objs.pop();
        this.keys.pop();
        this.expectKey = false;
        this.#ended(scopes);
        return;
      case 0x2c: // ,
        this.expectKey = this.objs[this.objs.length - 1] === true;
        return;
      case 0x3a: // :
        this.expectKey = false;
        return;
      case QUOTE:
        this.esc = 0;
        if (this.expectKey && this.objs[this.objs.length - 1] === true) {
          this.mode = KEY;
          this.keyBytes = [];
          return;
        }
        this.mode = VALUE;
        this.guard = null;
        if (places.length > 0) {
          const path = this.path();
          this.guard = places.find((p) => placeHolds(p.place, path))?.guard ?? null;
        }
        this.len = 0;
        this.state = 0;
        this.need = 0;
        return;
    }
  }

  #key(byte: number): void {
    if (this.esc === 1) this.esc = 0;
    else if (byte === BACKSLASH) this.esc = 1;
    else if (byte === QUOTE) {
      let key: string | null;
      try {
        key = JSON.parse(`"${utf8.decode(Uint8Array.from(this.keyBytes))}"`) as string;
      } catch {
        key = null;
      }
      this.keys[this.keys.length - 1] = key;
      this.mode = OUT;
      return;
    }
    this.keyBytes.push(byte);
  }

  #skip(byte: number, scopes: Scopes): void {
    if (this.esc === 1) this.esc = 0;
    else if (byte === BACKSLASH) this.esc = 1;
    else if (byte === QUOTE) {
      this.mode = OUT;
      this.#ended(scopes);
    }
  }

  #value(byte: number, scopes: Scopes): void {
    if (this.esc === 1) {
      if (byte === 0x75) {
        this.esc = 5;
        this.hex = 0;
        return;
      }
      this.esc = 0;
      this.#char(ESCAPED[byte] ?? byte);
      return;
    }
    if (this.esc >= 2) {
      this.hex = this.hex * 16 + parseInt(String.fromCharCode(byte), 16);
      if (--this.esc === 1) {
        this.esc = 0;
        this.#char(this.hex);
      }
      return;
    }
    if (byte === BACKSLASH) this.esc = 1;
    else if (byte === QUOTE) {
      if (this.len > this.guard!.max) this.broken = true;
      this.mode = OUT;
      this.guard = null;
      this.#ended(scopes);
    } else if (this.need > 0) {
      this.cp = (this.cp << 6) | (byte & 0x3f);
      if (--this.need === 0) this.state = step(this.guard!, this.state, this.cp);
    } else if (byte < 0x80) this.#char(byte);
    else {
      // The character counts from its first byte; its state is known at its last.
      this.need = byte >= 0xf0 ? 3 : byte >= 0xe0 ? 2 : 1;
      this.cp = byte & (byte >= 0xf0 ? 0x07 : byte >= 0xe0 ? 0x0f : 0x1f);
      if (++this.len > this.guard!.max) this.broken = true;
    }
  }

  #char(cp: number): void {
    this.state = step(this.guard!, this.state, cp);
    if (++this.len > this.guard!.max) this.broken = true;
  }
}

/** The character a short escape (`\n`, `\"`…) stands for, by the byte after the backslash. */
const ESCAPED: Record<number, number> = { 0x62: 8, 0x66: 12, 0x6e: 10, 0x72: 13, 0x74: 9 };

/**
 * A vocabulary's tokens as the guards read them: their bytes; their ids from the longest to the
 * shortest; whether each holds a quote (only such a token can open or close a string); and for a
 * plain token (whole characters, no quote, no backslash: it stays inside a string), its characters.
 */
interface VocabBytes {
  /** All tokens' bytes, packed: token `id`'s are `data[start[id] .. start[id] + length[id])`. */
  data: Uint8Array;
  start: Int32Array;
  length: Int16Array;
  longest: number;
  byLength: Int32Array;
  /** The byte length of each entry of `byLength`. */
  sortedLength: Int16Array;
  quote: Uint8Array;
  /** Characters of a plain token; -1: not plain. */
  chars: Int16Array;
}

const vocabBytes = new WeakMap<TokenVocabulary, VocabBytes>();
/** The most per-state tables (`LengthGuards.#afterPlain`) one grammar's guards keep: 2 bytes a token each. */
const TABLES = 16;

function bytesOf(vocab: TokenVocabulary): VocabBytes {
  let table = vocabBytes.get(vocab);
  if (!table) {
    const tokens = vocab.encoded.map((t) => rawTokenBytes(t, vocab.vocabType));
    const n = tokens.length;
    const start = new Int32Array(n);
    const length = new Int16Array(n);
    const data = new Uint8Array(tokens.reduce((sum, b) => sum + b.length, 0));
    const quote = new Uint8Array(n);
    const chars = new Int16Array(n);
    let at = 0;
    tokens.forEach((b, id) => {
      start[id] = at;
      length[id] = b.length;
      data.set(b, at);
      at += b.length;
      quote[id] = b.includes(QUOTE) ? 1 : 0;
      chars[id] = plainChars(b);
    });
    const byLength = Int32Array.from(tokens.keys()).sort((a, b) => length[b]! - length[a]!);
    const sortedLength = Int16Array.from(byLength, (id) => length[id]!);
    table = { data, start, length, longest: sortedLength[0] ?? 0, byLength, sortedLength, quote, chars };
    vocabBytes.set(vocab, table);
  }
  return table;
}

/** Token `id`'s bytes (a view). */
function tokenBytes(v: VocabBytes, id: number): Uint8Array {
  return v.data.subarray(v.start[id]!, v.start[id]! + v.length[id]!);
}

/** The characters of a token that stays inside a string (whole, well-formed UTF-8 characters, no quote or backslash); -1 otherwise. */
function plainChars(bytes: Uint8Array): number {
  let n = 0;
  let state = UTF8_BOUNDARY;
  for (const b of bytes) {
    if (b === QUOTE || b === BACKSLASH) return -1;
    state = utf8Step(state, b);
    if (state === UTF8_INVALID) return -1;
    if (state === UTF8_BOUNDARY) n++;
  }
  return state === UTF8_BOUNDARY ? n : -1;
}

/** The code point of the well-formed UTF-8 character at `data[i]`, and its byte length. */
function codePointAt(data: Uint8Array, i: number): { cp: number; size: number } {
  const lead = data[i]!;
  if (lead < 0x80) return { cp: lead, size: 1 };
  const size = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
  let cp = lead & (size === 4 ? 0x07 : size === 3 ? 0x0f : 0x1f);
  for (let k = 1; k < size; k++) cp = (cp << 6) | (data[i + k]! & 0x3f);
  return { cp, size };
}

/** The guards of one compiled grammar over one vocabulary: trackers start here, and masks are checked here. */
export class LengthGuards {
  readonly #scopes: Scopes;
  readonly #vocab: VocabBytes;
  /** The least room of the guards: a token of at most this many bytes cannot break a string it opens. */
  readonly #minRoom: number;
  /** Per guard and state, the state after each plain token (`#afterPlain`), and how many such tables are kept. */
  readonly #after = new Map<Guard, Map<number, Int16Array>>();
  #tables = 0;

  /** `scopes`: one whose `begin` is null (the whole reply), or a tool call's each. */
  constructor(scopes: readonly GuardScope[], vocab: TokenVocabulary) {
    const placed = (guards: readonly LengthGuard[]) =>
      guards.flatMap((g) => {
        const guard = guardOf(g);
        return g.places.map((place) => ({ place, guard }));
      });
    const whole = scopes.find((s) => s.begin === null);
    const calls = whole ? [] : scopes.map((s) => ({ begin: new TextEncoder().encode(s.begin!), places: placed(s.guards) }));
    this.#scopes = { whole: whole ? placed(whole.guards) : null, calls, longest: Math.max(0, ...calls.map((c) => c.begin.length)) };
    this.#vocab = bytesOf(vocab);
    this.#minRoom = Math.min(...[...(this.#scopes.whole ?? []), ...calls.flatMap((c) => c.places)].map((p) => p.guard.room));
  }

  start(): GuardTracker {
    return new GuardTracker(this.#scopes.whole);
  }

  /** Advances `at` over `token`'s bytes. */
  advance(at: GuardTracker, token: number): void {
    if (token < 0 || token >= this.#vocab.length.length) return;
    for (const b of tokenBytes(this.#vocab, token)) at.feed(b, this.#scopes);
  }

  /**
   * The most bytes a token may have and keep every bound with no check: at most one character a
   * byte, it cannot reach the bound of the string it is in, nor of one it opens.
   */
  #safeBytes(at: GuardTracker): number {
    return at.mode === VALUE && at.guard !== null ? Math.min(this.#minRoom, at.guard.room - at.len) : this.#minRoom;
  }

  /** Whether `token` keeps every guarded string able to end within its bound. */
  allows(at: GuardTracker, token: number): boolean {
    const v = this.#vocab;
    if (token < 0 || token >= v.length.length || v.length[token]! <= this.#safeBytes(at)) return true;
    const bytes = tokenBytes(v, token);
    const inGuarded = at.mode === VALUE && at.guard !== null;
    // Outside a guarded string, only a quote can open one.
    if (!inGuarded) return v.quote[token] === 0 || this.#walk(at, bytes);
    const chars = v.chars[token]!;
    if (chars < 0 || at.esc !== 0 || at.need !== 0) return this.#walk(at, bytes);
    const g = at.guard!;
    const len = at.len + chars;
    if (len > g.max) return false;
    const state = at.state < 0 ? -1 : this.#afterPlain(g, at.state)[token]!;
    return !outOfReach(g, len, state, false);
  }

  /**
   * From `state` of `g`, the state after each plain token (-1: none), built the first time a check
   * needs it; at most TABLES kept (a guard's automaton may have a state per character of a
   * `minLength`), the oldest dropped first.
   */
  #afterPlain(g: Guard, state: number): Int16Array {
    let states = this.#after.get(g);
    if (!states) this.#after.set(g, (states = new Map()));
    let after = states.get(state);
    if (after) return after;
    const { data, start, length, chars } = this.#vocab;
    after = new Int16Array(length.length).fill(-1);
    for (let id = 0; id < length.length; id++) {
      if (chars[id]! < 0) continue;
      let q = state;
      const end = start[id]! + length[id]!;
      for (let i = start[id]!; i < end && q >= 0; ) {
        const lead = data[i]!;
        if (lead < 0x80) {
          q = step(g, q, lead);
          i++;
          continue;
        }
        const { cp, size } = codePointAt(data, i);
        q = step(g, q, cp);
        i += size;
      }
      after[id] = q;
    }
    states.set(state, after);
    if (++this.#tables > TABLES) {
      for (const [guard, kept] of this.#after) {
        const oldest = kept.keys().next();
        if (oldest.done) continue;
        kept.delete(oldest.value);
        if (kept.size === 0) this.#after.delete(guard);
        this.#tables--;
        break;
      }
    }
    return after;
  }

  /** `allows` on a copy of the tracker, byte by byte. */
  #walk(at: GuardTracker, bytes: Uint8Array): boolean {
    const t = at.clone();
    for (const b of bytes) {
      t.feed(b, this.#scopes);
      if (t.broken) return false;
    }
    t.end();
    return !t.broken;
  }

  /**
   * Clears from `mask` the tokens `allows` rules out: of the tokens longer than `#safeBytes`,
   * longest first, in typed arrays (a plain token inside a guarded string costs a few reads).
   */
  filter(mask: Int32Array, at: GuardTracker): void {
    const safe = this.#safeBytes(at);
    const v = this.#vocab;
    const { longest, byLength, sortedLength, quote, chars } = v;
    if (longest <= safe) return;
    const g = at.mode === VALUE ? at.guard : null;
    const plain = g !== null && at.esc === 0 && at.need === 0;
    const after = plain && at.state >= 0 ? this.#afterPlain(g, at.state) : null;
    for (let i = 0; i < byLength.length && sortedLength[i]! > safe; i++) {
      const token = byLength[i]!;
      const w = token >> 5;
      const bit = 1 << (token & 31);
      if ((mask[w]! & bit) === 0) continue;
      let ok: boolean;
      if (!plain || chars[token]! < 0) ok = (g === null && quote[token] === 0) || this.#walk(at, tokenBytes(v, token));
      else {
        const len = at.len + chars[token]!;
        ok = len <= g.max && !outOfReach(g, len, after === null ? -1 : after[token]!, false);
      }
      if (!ok) mask[w] = mask[w]! & ~bit;
    }
  }

}
