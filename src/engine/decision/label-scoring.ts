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
 * With distinct first tokens, as for most option keys, the answer distribution comes from the
 * prompt's last position alone; deeper nodes cost one forward pass per trie branch ("row").
 */

interface TrieNode {
  path: number[];
  children: Map<number, TrieNode>;
  below: number; // labels whose path passes through or ends at this node
  ending: number[]; // labels whose path ends here
}

type Factor = { node: TrieNode; token: number } | { node: TrieNode; rest: true };

export interface LabelScoringPlan {
  /** Token rows to feed after the prompt (each a trie path); the root needs none. */
  rows: number[][];
  /** Runs the plan given the root's log-probabilities and a way to read a row's positions. */
  labelLogProbs(root: Float64Array, rowLogProbs: readonly (readonly Float64Array[])[]): number[];
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

  // A row per deepest needed node; the positions along a row serve every node on its way.
  const deep = [...needed].filter((n) => n !== root);
  const rowNodes = deep.filter((n) => !deep.some((m) => m !== n && isPrefix(n.path, m.path)));
  const rows = rowNodes.map((n) => n.path);

  return {
    rows,
    labelLogProbs(rootLogProbs, rowLogProbs) {
      const logProbsAt = (node: TrieNode): Float64Array => {
        if (node === root) return rootLogProbs;
        const r = rowNodes.findIndex((m) => isPrefix(node.path, m.path));
        const at = rowLogProbs[r]?.[node.path.length - 1];
        if (!at) throw new Error('label scoring: missing log-probabilities for a trie node');
        return at;
      };
      return factorsOf.map((factors, label) => {
        let logp = Math.log(shareOf[label]!);
        for (const f of factors) {
          const lp = logProbsAt(f.node);
          if ('token' in f) {
            logp += lp[f.token]!;
          } else {
            let continuing = 0;
            for (const token of f.node.children.keys()) continuing += Math.exp(lp[token]!);
            logp += Math.log(Math.max(0, 1 - continuing));
          }
        }
        return logp;
      });
    },
  };
}

function isPrefix(a: readonly number[], b: readonly number[]): boolean {
  if (a.length > b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
