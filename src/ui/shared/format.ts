/** Numbers as people read them: decimal byte units (as the hub lists sizes), percents, durations. */

export function formatBytes(n: number): string {
  if (!Number.isFinite(n) || n < 0) return '–';
  if (n < 1000) return `${n} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let value = n / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value.toFixed(value < 10 ? 2 : value < 100 ? 1 : 0)} ${units[unit]}`;
}

/** A probability (0–1) as a percent with one decimal: 0.4567 → "45.7%". */
export function formatPercent(p: number): string {
  return `${(p * 100).toFixed(1)}%`;
}

export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

export function formatRate(perSecond: number): string {
  return Number.isFinite(perSecond) ? perSecond.toFixed(perSecond < 10 ? 1 : 0) : '–';
}

/**
 * A share (0–1) as a percent that never rounds a small share to zero: one decimal from 0.1 %
 * up, else two significant digits (0.00042 → "0.042%", 3e-9 → "3.0e-7%"). Used for the answer
 * mass, which a weak model can put far below 0.1 %.
 */
export function formatShare(p: number): string {
  if (!Number.isFinite(p)) return '–';
  const percent = p * 100;
  if (percent === 0 || percent >= 0.1) return `${percent.toFixed(1)}%`;
  return `${percent >= 1e-4 ? Number(percent.toPrecision(2)).toString() : percent.toExponential(1)}%`;
}

/** The coverage a miscoverage alpha promises, as a percent: 0.1 → "90%", 0.05 → "95%", 0.125 → "87.5%". */
export function formatCoverage(alpha: number): string {
  return `${Number(((1 - alpha) * 100).toFixed(2)).toString()}%`;
}
