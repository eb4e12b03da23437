/**
 * Exact probabilities of answer labels that span several tokens.
 *
 * Each label is a path of token ids after the question's prompt. The labels form a trie. A label's
 * probability is the probability that the model's answer starts with the shortest part of its
 * path that no other label shares (teacher forcing, as lm-evaluation-harness does, but stopping
 * as soon as the label is decided). A label whose whole path is a prefix of another's ("1" and
 * "10") gets P(path) · (1 − Σ P(continuations into the longer labels)). Labels whose token paths are
 * identical (possible only with lossy tokenizers) split that mass equally.
 *
 * Everything a label needs is the log-probability of some tokens, each after the prompt and a
 * trie path: the plan names them as `continuations` (token sequences after the prompt, every token
 * of which is read), and `labelLogProbs` is the one computation from their log-probabilities to
 * the labels'. Where they come from is the caller's: the browser's engine reads them from the
 * distributions of its own forward passes (`fromDistributions`: the prompt's last position, then
 * one pass per trie branch, a "row"); a server reads them from a serving engine's prompt
 * log-probabilities (src/server/). With distinct first tokens, as for most option keys, every
 * continuation is one token and the rows are none.
 */

interface TrieNode {
  path: number[];
  children: Map<number, TrieNode>;
  below: number; // labels whose path passes through or ends at this node
  ending: number[]; // labels whose path ends here
}

type Factor = { node: TrieNode; token: number } | { node: TrieNode; rest: true };

/** Where a (trie path, next token) log-probability is read: continuation `c`, position `at`. */
type Read = { c: number; at: number };

export interface LabelScoringPlan {
  /**
   * Token sequences after the prompt whose every token's log-probability the labels need: entry
   * `[i][j]` of what `labelLogProbs` takes is log P(continuations[i][j] | prompt, continuations[i][0..j)).
   * None is a prefix of another.
   */
  continuations: number[][];
  /** Token rows to feed after the prompt (each a trie path) for `fromDistributions`; the root needs none. */
  rows: number[][];
  /**
   * The continuations' log-probabilities from full next-token distributions: `root` after the
   * prompt, `rowLogProbs[r][k]` after the prompt and `rows[r][0..k]`.
   */
  fromDistributions(root: Float64Array, rowLogProbs: readonly (readonly Float64Array[])[]): number[][];
  /** Each label's factors and where each reads its log-probability (for `labelLogProbs`). */
  readonly factors: LabelFactors;
}

/** Each label's factors along its trie path, its share of an identical path, and where each (path, token) is read. */
export interface LabelFactors {
  factorsOf: Factor[][];
  shareOf: number[];
  reads: Map<string, Read>;
}

export function planLabelScoring(paths: readonly (readonly number[])[]): LabelScoringPlan {
  const root: TrieNode = { path: [], children: new Map(), below: 0, ending: [] };
  paths.forEach((path, label) => {
    if (path.length === 0) throw new Error(`label ${label} has an empty token path`);
    let node = root;
    node.below += 1;
    for (const token of path) {
      let child = node.children.get(token);
      if (!child) {
        child = { path: [...node.path, token], children: new Map(), below: 0, ending: [] };
        node.children.set(token, child);
      }
      node = child;
      node.below += 1;
    }
    node.ending.push(label);
  });

  const factorsOf: Factor[][] = [];
  const shareOf: number[] = [];
  const needed = new Set<TrieNode>();
  paths.forEach((path, label) => {
    const factors: Factor[] = [];
    let node = root;
    let share = 1;
    for (let depth = 0; ; depth++) {
      if (depth === path.length) {
        if (node.below > node.ending.length) factors.push({ node, rest: true });
        share = 1 / node.ending.length;
        break;
      }
      if (depth > 0 && node.below === 1) break; // decided: no other label continues from here
      factors.push({ node, token: path[depth]! });
      node = node.children.get(path[depth]!)!;
    }
    for (const f of factors) needed.add(f.node);
    factorsOf[label] = factors;
    shareOf[label] = share;
  });

  // Every (node, token) a factor reads is the sequence node.path + [token]; the continuations are
  // those sequences that no other extends (reading a sequence reads every prefix of it).
  const sequences = new Map<string, number[]>();
  for (const factors of factorsOf) {
    for (const f of factors) {
      const tokens = 'token' in f ? [f.token] : [...f.node.children.keys()];
      for (const t of tokens) {
        const seq = [...f.node.path, t];
        sequences.set(seq.join(','), seq);
      }
    }
  }
  const all = [...sequences.values()];
  const continuations = all.filter((s) => !all.some((o) => o !== s && o.length > s.length && isPrefix(s, o)));
  const reads = new Map<string, Read>();
  for (const seq of all) {
    const c = continuations.findIndex((o) => isPrefix(seq, o));
    reads.set(seq.join(','), { c, at: seq.length - 1 });
  }

  // A row per deepest needed node; the positions along a row serve every node on its way.
  const deep = [...needed].filter((n) => n !== root);
  const rowNodes = deep.filter((n) => !deep.some((m) => m !== n && isPrefix(n.path, m.path)));
  const rows = rowNodes.map((n) => n.path);
  // Continuation position j is read from the distribution after its first j tokens: the root's, or a row's.
  const sources = continuations.map((seq) =>
    seq.map((_, j) => (j === 0 ? null : { r: rows.findIndex((row) => isPrefix(seq.slice(0, j), row)), k: j - 1 })),
  );

  return {
    continuations,
    rows,
    fromDistributions(rootLogProbs, rowLogProbs) {
      return continuations.map((seq, i) =>
        seq.map((token, j) => {
          const src = sources[i]![j];
          const dist = src ? rowLogProbs[src.r]?.[src.k] : rootLogProbs;
          if (!dist) throw new Error('label scoring: missing log-probabilities for a trie node');
          return dist[token]!;
        }),
      );
    },
    factors: { factorsOf, shareOf, reads },
  };
}

/**
 * Each label's log-probability from the continuations' token log-probabilities (one entry per
 * token of each of `plan.continuations`): the browser's passes and a serving engine's prompt
 * log-probabilities both come here.
 */
export function labelLogProbs(plan: Pick<LabelScoringPlan, 'factors'>, continuationLogProbs: readonly (readonly number[])[]): number[] {
  const { factorsOf, shareOf, reads } = plan.factors;
  const read = (path: readonly number[], token: number): number => {
    const where = reads.get([...path, token].join(','));
    const lp = where ? continuationLogProbs[where.c]?.[where.at] : undefined;
    if (lp === undefined) throw new Error('label scoring: missing log-probability of a continuation token');
    return lp;
  };
  return factorsOf.map((factors, label) => {
    let logp = Math.log(shareOf[label]!);
    for (const f of factors) {
      if ('token' in f) {
        logp += read(f.node.path, f.token);
      } else {
        let continuing = 0;
        for (const token of f.node.children.keys()) continuing += Math.exp(read(f.node.path, token));
        logp += Math.log(Math.max(0, 1 - continuing));
      }
    }
    return logp;
  });
}

function isPrefix(a: readonly number[], b: readonly number[]): boolean {
  if (a.length > b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
