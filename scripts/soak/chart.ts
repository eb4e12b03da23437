/**
 * The soak's curve as an SVG written by hand (polylines, no dependency): above, each bounded
 * memory figure as a percentage of its level at the warm-up's end, with the ±5 % band; below, the
 * prefix cache's bytes and the live tensors beyond it. Reloads of the model are marked.
 */
import type { Figure, Sample } from './drift.ts';

const W = 760;
const PANEL = 200;
const LEFT = 64;
const RIGHT = 150;
const TOP = 36;
const GAP = 56;

const SERIES = [
  { key: 'rendererRss', label: 'renderer RSS', colour: '#1f77b4' },
  { key: 'rendererAnon', label: 'renderer private (RssAnon)', colour: '#17becf' },
  { key: 'pageHeap', label: 'page JS heap (after GC)', colour: '#9467bd' },
  { key: 'workerHeap', label: 'worker JS heap (after GC)', colour: '#d62728' },
  { key: 'workerObjects', label: 'worker objects (no code)', colour: '#8c564b' },
  { key: 'wasmHeap', label: 'wasm heap', colour: '#2ca02c' },
] as const;

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
const mib = (b: number) => (b / 2 ** 20).toFixed(1);

export interface ChartOptions {
  title: string;
  warmup: number;
  bound: number;
  reloads: readonly number[];
  /** Each figure's level (the verdict's: drift.ts); else its first reading after the warm-up. */
  levels?: Partial<Record<Figure, number>>;
}

/** The SVG text of `samples`. */
export function soakChart(samples: readonly Sample[], o: ChartOptions): string {
  const last = samples.at(-1)?.i ?? 1;
  const x = (i: number) => LEFT + ((W - LEFT - RIGHT) * i) / Math.max(1, last);
  const out: string[] = [];
  const h = TOP + 2 * PANEL + GAP + 60;
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${h}" viewBox="0 0 ${W} ${h}" font-family="sans-serif" font-size="11">`);
  out.push(`<rect width="${W}" height="${h}" fill="#fff"/>`);
  out.push(`<text x="${LEFT}" y="18" font-size="13" font-weight="bold">${esc(o.title)}</text>`);

  // Panel 1: relative to the level, clamped to ±(3 × bound).
  const top1 = TOP;
  const span = 3 * o.bound;
  const y1 = (r: number) => top1 + PANEL * (1 - (Math.max(-span, Math.min(span, r)) + span) / (2 * span));
  out.push(`<rect x="${LEFT}" y="${y1(o.bound)}" width="${W - LEFT - RIGHT}" height="${y1(-o.bound) - y1(o.bound)}" fill="#eee"/>`);
  for (const r of [-span, -o.bound, 0, o.bound, span]) {
    out.push(`<line x1="${LEFT}" x2="${W - RIGHT}" y1="${y1(r)}" y2="${y1(r)}" stroke="#ccc"/>`);
    out.push(`<text x="${LEFT - 6}" y="${y1(r) + 4}" text-anchor="end">${r > 0 ? '+' : ''}${(r * 100).toFixed(0)} %</text>`);
  }
  out.push(`<text x="${LEFT}" y="${top1 - 6}">memory relative to its level, the median over requests ${o.warmup}–${o.warmup + 99} (grey: ±${(o.bound * 100).toFixed(0)} %)</text>`);
  SERIES.forEach((s, n) => {
    const base = o.levels?.[s.key] ?? samples.find((p) => p.i >= o.warmup && p[s.key] !== null)?.[s.key];
    if (!base) return;
    const pts = samples.filter((p) => p[s.key] !== null).map((p) => `${x(p.i).toFixed(1)},${y1((p[s.key] as number) / base - 1).toFixed(1)}`);
    out.push(`<polyline fill="none" stroke="${s.colour}" stroke-width="1.5" points="${pts.join(' ')}"/>`);
    out.push(`<text x="${W - RIGHT + 8}" y="${top1 + 14 + n * 28}" fill="${s.colour}">${esc(s.label)}</text>`);
    out.push(`<text x="${W - RIGHT + 8}" y="${top1 + 26 + n * 28}" fill="${s.colour}">level ${mib(base)} MiB</text>`);
  });

  // Panel 2: the prefix cache's bytes and the stray tensors.
  const top2 = top1 + PANEL + GAP + 20;
  const maxBytes = Math.max(1, ...samples.map((s) => s.cacheBytes));
  const y2 = (b: number) => top2 + PANEL * (1 - b / maxBytes);
  for (const f of [0, 0.5, 1]) {
    out.push(`<line x1="${LEFT}" x2="${W - RIGHT}" y1="${y2(f * maxBytes)}" y2="${y2(f * maxBytes)}" stroke="#ccc"/>`);
    out.push(`<text x="${LEFT - 6}" y="${y2(f * maxBytes) + 4}" text-anchor="end">${mib(f * maxBytes)}</text>`);
  }
  out.push(`<text x="${LEFT}" y="${top2 - 6}">prefix cache (MiB); live tensors beyond it: ${Math.max(0, ...samples.map((s) => s.strayTensors))} at most</text>`);
  out.push(`<polyline fill="none" stroke="#9467bd" stroke-width="1.5" points="${samples.map((p) => `${x(p.i).toFixed(1)},${y2(p.cacheBytes).toFixed(1)}`).join(' ')}"/>`);
  out.push(`<text x="${W - RIGHT + 8}" y="${top2 + 14}" fill="#9467bd">prefix cache bytes</text>`);
  // Reloads are marked where they are few enough to see; otherwise counted.
  if (o.reloads.length <= 40) for (const r of o.reloads) out.push(`<line x1="${x(r)}" x2="${x(r)}" y1="${top1}" y2="${top2 + PANEL}" stroke="#ff7f0e" stroke-dasharray="2,3"/>`);
  if (o.reloads.length) out.push(`<text x="${W - RIGHT + 8}" y="${top2 + 30}" fill="#ff7f0e">${o.reloads.length <= 40 ? 'model reloads' : `${o.reloads.length} model reloads`}</text>`);

  // The request axis.
  const base = top2 + PANEL;
  for (let k = 0; k <= 4; k++) {
    const i = Math.round((last * k) / 4);
    out.push(`<text x="${x(i)}" y="${base + 16}" text-anchor="middle">${i}</text>`);
  }
  out.push(`<text x="${(LEFT + W - RIGHT) / 2}" y="${base + 32}" text-anchor="middle">requests</text>`);
  out.push('</svg>');
  return out.join('\n') + '\n';
}
