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
