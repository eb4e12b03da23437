/**
 * The run of a labelled extraction set over an engine: every item's request through the `extract`
 * function given (the client's `extractions.create`, in the page or through the CLI's browser),
 * one observation per field, then the metrics by field type and by field. Pure apart from the
 * calls it is given.
 */
import type { ExtractionRequestInput } from '../contract/extraction-request.ts';
import type { ExtractionAnswer, ExtractionResponse } from '../contract/extraction-response.ts';
import { extractionMetrics } from './extraction-metrics.ts';
import type { ExpectedValue, ExtractionItem, ExtractionObservation, ExtractionReport } from './extraction-types.ts';

export type ExtractFn = (request: ExtractionRequestInput, options: { signal?: AbortSignal }) => Promise<ExtractionResponse>;

export interface ExtractionRunOptions {
  items: readonly ExtractionItem[];
  dataName: string;
  extract: ExtractFn;
  signal?: AbortSignal;
  onProgress?: (p: { done: number; total: number }) => void;
  /** Where the engine runs, as the caller knows it (the response does not say). */
  device?: string;
}

/** One field's observation from its answer. */
export function observeField(item: ExtractionItem, index: number, key: string, answer: ExtractionAnswer | undefined): ExtractionObservation {
  const base = { item: index, line: item.line, id: item.id, key, type: item.types[key]!, expected: item.expected[key]!, expectedSource: item.sources[key] ?? null };
  if (!answer || answer.type === 'refusal') return { ...base, value: null, guess: null, pNull: null, confidence: null, refused: true, source: null };
  const source = answer.type === 'list' ? null : answer.source ? { part: answer.source.part, start: answer.source.start, end: answer.source.end } : null;
  return {
    ...base,
    value: answer.value as ExpectedValue,
    guess: answer.guess as ExpectedValue,
    pNull: answer.pNull,
    confidence: answer.confidence,
    refused: false,
    source,
  };
}

function percentile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** Groups observations by a key, in first-seen order. */
function groupBy(observations: readonly ExtractionObservation[], by: (o: ExtractionObservation) => string): Map<string, ExtractionObservation[]> {
  const groups = new Map<string, ExtractionObservation[]>();
  for (const o of observations) {
    const k = by(o);
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k)!.push(o);
  }
  return groups;
}

export async function runExtractionEvaluation(options: ExtractionRunOptions): Promise<{ report: ExtractionReport; observations: ExtractionObservation[] }> {
  const { items, extract, signal, onProgress } = options;
  const observations: ExtractionObservation[] = [];
  const errors: ExtractionReport['errors'] = [];
  const latencies: number[] = [];
  let model = 'unknown';
  for (let i = 0; i < items.length; i++) {
    signal?.throwIfAborted();
    const item = items[i]!;
    const started = performance.now();
    try {
      const response = await extract(item.request, signal ? { signal } : {});
      latencies.push(performance.now() - started);
      model = response.model;
      for (const key of Object.keys(item.types)) observations.push(observeField(item, i, key, response.answers[key]));
    } catch (e) {
      if (signal?.aborted) throw e;
      errors.push({ item: i, line: item.line, id: item.id, message: e instanceof Error ? e.message : String(e) });
    }
    onProgress?.({ done: i + 1, total: items.length });
  }
  const sorted = [...latencies].sort((a, b) => a - b);
  const report: ExtractionReport = {
    kind: 'extraction',
    data: { name: options.dataName, items: items.length },
    model,
    device: options.device ?? 'unknown',
    by_type: [...groupBy(observations, (o) => o.type)].map(([type, list]) => extractionMetrics(type, list)),
    by_field: [...groupBy(observations, (o) => o.key)].map(([key, list]) => extractionMetrics(key, list)),
    errors,
    latency_ms: sorted.length === 0 ? null : { mean: sorted.reduce((a, b) => a + b, 0) / sorted.length, p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95) },
  };
  return { report, observations };
}
