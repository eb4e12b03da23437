import type { ChatResult, DecisionResult } from './schema.ts';
import { esc, groupBy, ms } from './report-cells.ts';

/**
 * The chart, as SVG text (no network, no dependency): per decision configuration, the speedup
 * over the naive way beside its token-count ceiling; and, per chat target, the follow-up time to
 * first token with KV reuse against cold.
 */
export function renderChart(decisions: readonly DecisionResult[], chat: readonly ChatResult[]): string {
  const main = decisions.filter((d) => d.device === 'wasm');
  const groups = [...groupBy(main, (d) => d.model)];
  const W = 900;
  const rowH = 22;
  const left = 250;
  const plotW = W - left - 40;
  const rows = main.length + groups.length;
  const chatRows = chat.length * 2;
  const H = 70 + rows * rowH + 60 + chatRows * rowH + 50;
  const maxX = Math.max(1, ...main.map((d) => Math.max(d.speedup, d.ceiling)));
  const x = (v: number) => left + (v / maxX) * plotW;
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  parts.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  parts.push(`<text x="10" y="22" font-size="15" font-weight="bold">Decisions: speedup over the naive way (bar) vs its token-count ceiling (tick), wasm</text>`);
  parts.push(`<rect x="10" y="34" width="12" height="10" fill="#2b6cb0"/><text x="26" y="43">speedup = naive ms ÷ engine ms (median)</text>`);
  parts.push(`<rect x="290" y="34" width="3" height="12" fill="#c53030"/><text x="298" y="43">ceiling = naive prefilled tokens ÷ engine prefilled tokens</text>`);
  let y = 62;
  for (const [model, ds] of groups) {
    parts.push(`<text x="10" y="${y + 14}" font-weight="bold">${esc(model)}</text>`);
    y += rowH;
    for (const d of ds) {
      parts.push(`<text x="20" y="${y + 14}">S=${d.state_tokens}, Q=${d.questions}</text>`);
      parts.push(`<rect x="${left}" y="${y + 4}" width="${Math.max(1, x(d.speedup) - left).toFixed(1)}" height="${rowH - 8}" fill="#2b6cb0"/>`);
      parts.push(`<rect x="${(x(d.ceiling) - 1.5).toFixed(1)}" y="${y + 1}" width="3" height="${rowH - 2}" fill="#c53030"/>`);
      parts.push(`<text x="${(Math.max(x(d.speedup), x(d.ceiling)) + 6).toFixed(1)}" y="${y + 15}">${d.speedup.toFixed(2)}× / ${d.ceiling.toFixed(2)}× (${(d.efficiency * 100).toFixed(0)}%)</text>`);
      y += rowH;
    }
  }
  parts.push(`<line x1="${left}" y1="60" x2="${left}" y2="${y}" stroke="#444"/>`);
  for (let t = 0; t <= maxX; t += maxX > 12 ? 4 : maxX > 6 ? 2 : 1) {
    parts.push(`<line x1="${x(t).toFixed(1)}" y1="${y}" x2="${x(t).toFixed(1)}" y2="${y + 4}" stroke="#444"/><text x="${x(t).toFixed(1)}" y="${y + 16}" text-anchor="middle">${t}×</text>`);
  }
  y += 40;
  parts.push(`<text x="10" y="${y}" font-size="15" font-weight="bold">Follow-up turn: time to first token, KV reuse vs cold prefill</text>`);
  y += 10;
  const maxT = Math.max(1, ...chat.map((c) => c.cold_followup_ttft_ms));
  const tx = (v: number) => left + (v / maxT) * plotW;
  for (const c of chat) {
    for (const [label, v, color] of [
      [`${c.model} · ${c.device}: reuse`, c.followup_ttft_ms, '#2b6cb0'],
      [`cold (${c.followup_history_tokens}-token history)`, c.cold_followup_ttft_ms, '#a0aec0'],
    ] as const) {
      parts.push(`<text x="20" y="${y + 14}">${esc(label)}</text>`);
      parts.push(`<rect x="${left}" y="${y + 4}" width="${Math.max(1, tx(v) - left).toFixed(1)}" height="${rowH - 8}" fill="${color}"/>`);
      parts.push(`<text x="${(tx(v) + 6).toFixed(1)}" y="${y + 15}">${esc(ms(v))}</text>`);
      y += rowH;
    }
  }
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}
