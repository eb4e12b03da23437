import type { ExtractionAnswer, ExtractionSource } from '../../contract/extraction-response.ts';

/** A source of a field's value (or of one list item) in the state's text. */
export interface Span {
  key: string;
  start: number;
  end: number;
}

/** Where a part starts in the text the model reads (the parts joined with "\n"). */
function partOffset(parts: readonly string[], part: number): number {
  let offset = 0;
  for (let i = 0; i < part; i++) offset += parts[i]!.length + 1;
  return offset;
}

/** Every source of the answers, as offsets into the joined text; one per value or list item. */
export function sourceSpans(parts: readonly string[], answers: Record<string, ExtractionAnswer>): Span[] {
  const spans: Span[] = [];
  const add = (key: string, s: ExtractionSource | undefined) => {
    if (!s || s.part >= parts.length || s.end > parts[s.part]!.length) return;
    const offset = partOffset(parts, s.part);
    spans.push({ key, start: offset + s.start, end: offset + s.end });
  };
  for (const [key, a] of Object.entries(answers)) {
    if (a.type === 'refusal') continue;
    if (a.type === 'list') a.items?.forEach((item) => add(key, item.source));
    else add(key, a.source);
  }
  return spans;
}

/** The text cut at every span's ends: each piece with the keys whose sources cover it. */
export function segments(text: string, spans: readonly Span[]): { text: string; keys: string[] }[] {
  const cuts = new Set<number>([0, text.length]);
  for (const s of spans) {
    cuts.add(s.start);
    cuts.add(s.end);
  }
  const points = [...cuts].filter((c) => c >= 0 && c <= text.length).sort((a, b) => a - b);
  const out: { text: string; keys: string[] }[] = [];
  for (let i = 0; i + 1 < points.length; i++) {
    const [a, b] = [points[i]!, points[i + 1]!];
    const keys = [...new Set(spans.filter((s) => s.start <= a && s.end >= b).map((s) => s.key))];
    out.push({ text: text.slice(a, b), keys });
  }
  return out;
}

/** The state as it was sent, each value highlighted where it came from (hover names the field). */
export function HighlightedState({ parts, answers }: { parts: readonly string[]; answers: Record<string, ExtractionAnswer> }) {
  const text = parts.join('\n');
  const pieces = segments(text, sourceSpans(parts, answers));
  return (
    <pre class="extract-state" style={{ whiteSpace: 'pre-wrap' }} data-testid="highlighted-state" aria-label="The state, each extracted value marked where it came from">
      {pieces.map((p, i) =>
        p.keys.length === 0 ? (
          p.text
        ) : (
          <mark key={i} data-testid="source-mark" data-keys={JSON.stringify(p.keys)} title={p.keys.join(', ')}>
            {p.text}
          </mark>
        ),
      )}
    </pre>
  );
}
