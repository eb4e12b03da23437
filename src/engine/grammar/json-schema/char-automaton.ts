/**
 * Deterministic automata over code points, for the cases where one string must satisfy several
 * constraints at once: a `pattern` beside a `format` or another pattern, a length bound beside a
 * pattern, property names that must avoid the listed ones, integers that must also be multiples.
 * Each is built from a Regex (regex.ts), intersected exactly, and written back as right-linear
 * EBNF (ebnf-emit.ts). Sizes are bounded: past `MAX_STATES` the constraint is refused.
 */
import { SchemaRefusal } from './refusal.ts';
import { ANY_CHAR, intersectSets, normalizeSet, type CharSet, type Regex } from './regex.ts';

export interface Edge {
  set: CharSet;
  to: number;
}
export interface Dfa {
  /** State 0 is the start. */
  accept: boolean[];
  edges: Edge[][];
}

export const MAX_STATES = 4000;
const MAX_NFA = 40000;

interface Nfa {
  eps: number[][];
  chars: { set: CharSet; to: number }[][];
}

function tooBig(what: string): never {
  throw new SchemaRefusal([], `its automaton grows past ${MAX_STATES} states (${what}); simplify the pattern or drop a bound`);
}

function buildNfa(r: Regex): { nfa: Nfa; start: number; end: number } {
  const nfa: Nfa = { eps: [], chars: [] };
  const state = () => {
    if (nfa.eps.length >= MAX_NFA) tooBig('the pattern unrolled');
    nfa.eps.push([]);
    nfa.chars.push([]);
    return nfa.eps.length - 1;
  };
  const build = (x: Regex, from: number): number => {
    switch (x.t) {
      case 'set': {
        const to = state();
        if (x.set.length > 0) nfa.chars[from]!.push({ set: x.set, to });
        return to;
      }
      case 'seq':
        return x.items.reduce((at, item) => build(item, at), from);
      case 'alt': {
        const end = state();
        for (const item of x.items) nfa.eps[build(item, from)]!.push(end);
        return end;
      }
      case 'rep': {
        let at = from;
        for (let i = 0; i < x.min; i++) at = build(x.node, at);
        if (x.max === null) {
          const loop = state();
          nfa.eps[at]!.push(loop);
          nfa.eps[build(x.node, loop)]!.push(loop);
          return loop;
        }
        const end = state();
        nfa.eps[at]!.push(end);
        for (let i = x.min; i < x.max; i++) {
          at = build(x.node, at);
          nfa.eps[at]!.push(end);
        }
        return end;
      }
    }
  };
  const start = state();
  const end = build(r, start);
  return { nfa, start, end };
}

/** Splits the union of `sets` into pieces, each piece inside or outside every set. */
function pieces(sets: CharSet[]): [number, number][] {
  const cuts = new Set<number>();
  for (const s of sets) for (const [lo, hi] of s) cuts.add(lo).add(hi + 1);
  const points = [...cuts].sort((a, b) => a - b);
  const out: [number, number][] = [];
  for (let i = 0; i + 1 < points.length; i++) out.push([points[i]!, points[i + 1]! - 1]);
  return out;
}

const contains = (s: CharSet, cp: number) => s.some(([lo, hi]) => lo <= cp && cp <= hi);

export function regexDfa(r: Regex): Dfa {
  const { nfa, start, end } = buildNfa(r);
  const closure = (states: number[]): number[] => {
    const seen = new Set(states);
    const stack = [...states];
    while (stack.length) for (const n of nfa.eps[stack.pop()!]!) if (!seen.has(n)) (seen.add(n), stack.push(n));
    return [...seen].sort((a, b) => a - b);
  };
  const dfa: Dfa = { accept: [], edges: [] };
  const ids = new Map<string, number>();
  const queue: number[][] = [];
  const idOf = (states: number[]) => {
    const key = states.join(',');
    let id = ids.get(key);
    if (id === undefined) {
      if (ids.size >= MAX_STATES) tooBig('the pattern as an automaton');
      id = ids.size;
      ids.set(key, id);
      dfa.accept.push(states.includes(end));
      dfa.edges.push([]);
      queue.push(states);
    }
    return id;
  };
  idOf(closure([start]));
  for (let q = 0; q < queue.length; q++) {
    const members = queue[q]!;
    const outs = members.flatMap((m) => nfa.chars[m]!);
    const byTarget = new Map<string, [number, number][]>();
    for (const [lo, hi] of pieces(outs.map((o) => o.set))) {
      const targets = [...new Set(outs.filter((o) => contains(o.set, lo)).map((o) => o.to))];
      if (targets.length === 0) continue;
      const key = closure(targets).join(',');
      if (!byTarget.has(key)) byTarget.set(key, []);
      byTarget.get(key)!.push([lo, hi]);
    }
    for (const [key, ranges] of byTarget) {
      const to = idOf(key === '' ? [] : key.split(',').map(Number));
      dfa.edges[q]!.push({ set: intersectSets(normalizeSet(ranges), ANY_CHAR), to });
    }
  }
  return trim(dfa);
}

/** Strings both automata accept. */
export function intersect(a: Dfa, b: Dfa): Dfa {
  const out: Dfa = { accept: [], edges: [] };
  const ids = new Map<number, number>();
  const queue: [number, number][] = [];
  const idOf = (x: number, y: number) => {
    const key = x * (b.accept.length + 1) + y;
    let id = ids.get(key);
    if (id === undefined) {
      if (ids.size >= MAX_STATES) tooBig('two constraints intersected');
      id = ids.size;
      ids.set(key, id);
      out.accept.push(a.accept[x]! && b.accept[y]!);
      out.edges.push([]);
      queue.push([x, y]);
    }
    return id;
  };
  idOf(0, 0);
  for (let q = 0; q < queue.length; q++) {
    const [x, y] = queue[q]!;
    for (const ea of a.edges[x]!) for (const eb of b.edges[y]!) {
      const s = intersectSets(ea.set, eb.set);
      if (s.length > 0) out.edges[q]!.push({ set: s, to: idOf(ea.to, eb.to) });
    }
  }
  return trim(out);
}

/**
 * Strings of `a` whose length (in code points) is within [min, max]. Past `limit` states: null
 * where a limit is given, else the refusal (past MAX_STATES).
 */
export function withLength(a: Dfa, min: number, max: number | null): Dfa;
export function withLength(a: Dfa, min: number, max: number | null, limit: number): Dfa | null;
export function withLength(a: Dfa, min: number, max: number | null, limit?: number): Dfa | null {
  const cap = max ?? min;
  const out: Dfa = { accept: [], edges: [] };
  const ids = new Map<number, number>();
  const queue: [number, number][] = [];
  const idOf = (x: number, c: number) => {
    const key = x * (cap + 1) + c;
    let id = ids.get(key);
    if (id === undefined) {
      if (ids.size >= (limit ?? MAX_STATES)) {
        if (limit !== undefined) throw new Outgrown();
        tooBig('a length bound beside a pattern or format');
      }
      id = ids.size;
      ids.set(key, id);
      out.accept.push(a.accept[x]! && c >= min);
      out.edges.push([]);
      queue.push([x, c]);
    }
    return id;
  };
  try {
    idOf(0, 0);
    for (let q = 0; q < queue.length; q++) {
      const [x, c] = queue[q]!;
      if (max !== null && c >= max) continue;
      for (const e of a.edges[x]!) out.edges[q]!.push({ set: e.set, to: idOf(e.to, Math.min(c + 1, cap)) });
    }
  } catch (e) {
    if (e instanceof Outgrown) return null;
    throw e;
  }
  return trim(out);
}

/** withLength's automaton outgrew the limit it was given. */
class Outgrown extends Error {}

/** Strings over ANY_CHAR that `a` does not accept. */
export function complement(a: Dfa): Dfa {
  const n = a.accept.length;
  const out: Dfa = { accept: [...a.accept.map((x) => !x), true], edges: [] };
  for (let q = 0; q < n; q++) {
    const used = normalizeSet(a.edges[q]!.flatMap((e) => e.set));
    const rest = intersectSets(ANY_CHAR, complementOf(used));
    out.edges.push([...a.edges[q]!, ...(rest.length > 0 ? [{ set: rest, to: n }] : [])]);
  }
  out.edges.push([{ set: ANY_CHAR, to: n }]);
  if (n === 0) return { accept: [true], edges: [[{ set: ANY_CHAR, to: 0 }]] };
  return out;
}

function complementOf(s: CharSet): CharSet {
  const out: [number, number][] = [];
  let next = 0;
  for (const [lo, hi] of s) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= 0x10ffff) out.push([next, 0x10ffff]);
  return out;
}

export const isEmpty = (a: Dfa): boolean => !a.accept.some(Boolean);

/** Whether every string of `a` is one of `b`. */
export const isSubset = (a: Dfa, b: Dfa): boolean => isEmpty(intersect(a, complement(b)));

/** Drops the states that no accepting state can be reached from (and those not reached), renumbered from 0. */
function trim(a: Dfa): Dfa {
  const n = a.accept.length;
  const live = a.accept.map(Boolean);
  for (let changed = true; changed; ) {
    changed = false;
    for (let q = 0; q < n; q++) if (!live[q] && a.edges[q]!.some((e) => live[e.to])) (live[q] = true), (changed = true);
  }
  if (n === 0 || !live[0]) return { accept: [], edges: [] };
  const order = new Map<number, number>([[0, 0]]);
  const queue = [0];
  for (let i = 0; i < queue.length; i++) {
    for (const e of a.edges[queue[i]!]!) if (live[e.to] && !order.has(e.to)) (order.set(e.to, order.size), queue.push(e.to));
  }
  const out: Dfa = { accept: [], edges: [] };
  for (const q of queue) {
    out.accept.push(a.accept[q]!);
    out.edges.push(a.edges[q]!.filter((e) => order.has(e.to)).map((e) => ({ set: e.set, to: order.get(e.to)! })));
  }
  return minimize(out);
}

/** Moore's partition refinement: states with the same future merged. */
function minimize(a: Dfa): Dfa {
  const n = a.accept.length;
  let cls: number[] = a.accept.map((x) => (x ? 1 : 0));
  for (;;) {
    const sigs = new Map<string, number>();
    const next = cls.map((c, q) => {
      const byClass = new Map<number, [number, number][]>();
      for (const e of a.edges[q]!) {
        const t = cls[e.to]!;
        if (!byClass.has(t)) byClass.set(t, []);
        byClass.get(t)!.push(...e.set.map(([x, y]) => [x, y] as [number, number]));
      }
      const sig = `${c}|${[...byClass].sort((x, y) => x[0] - y[0]).map(([t, r]) => `${t}:${normalizeSet(r).map(([x, y]) => `${x}-${y}`).join(',')}`).join(';')}`;
      if (!sigs.has(sig)) sigs.set(sig, sigs.size);
      return sigs.get(sig)!;
    });
    const stable = new Set(next).size === new Set(cls).size;
    cls = next;
    if (stable) break;
  }
  // Renumber so that the start's class is 0.
  const map = new Map<number, number>([[cls[0]!, 0]]);
  for (let q = 0; q < n; q++) if (!map.has(cls[q]!)) map.set(cls[q]!, map.size);
  const out: Dfa = { accept: new Array(map.size).fill(false), edges: Array.from({ length: map.size }, () => []) };
  const done = new Set<number>();
  for (let q = 0; q < n; q++) {
    const id = map.get(cls[q]!)!;
    if (done.has(id)) continue;
    done.add(id);
    out.accept[id] = a.accept[q]!;
    const byTarget = new Map<number, [number, number][]>();
    for (const e of a.edges[q]!) {
      const t = map.get(cls[e.to]!)!;
      if (!byTarget.has(t)) byTarget.set(t, []);
      byTarget.get(t)!.push(...e.set.map(([x, y]) => [x, y] as [number, number]));
    }
    out.edges[id] = [...byTarget].map(([to, r]) => ({ set: normalizeSet(r), to }));
  }
  return out;
}

/** `a` with every edge's set passed through `f` (edges left empty dropped, dead states trimmed). */
export function mapSets(a: Dfa, f: (s: CharSet) => CharSet): Dfa {
  return trim({ accept: a.accept, edges: a.edges.map((es) => es.map((e) => ({ set: f(e.set), to: e.to })).filter((e) => e.set.length > 0)) });
}
