/**
 * The evaluation of labelled extraction sets (docs/evaluation.md, "Extraction sets"): what a line
 * of the set holds, what one field of one item gave, and the report.
 */
import type { ExtractionRequestInput } from '../contract/extraction-request.ts';
import type { ExtractionSource } from '../contract/extraction-response.ts';
import type { ReliabilityBin } from './types.ts';

/** An expected value: a field's value as the response carries it, or null (the state does not give it). */
export type ExpectedValue = string | number | string[] | number[] | null;

/** One labelled item: the request, the expected value of every field, and (optionally) where each value sits. */
export interface ExtractionItem {
  /** 1-based line of the JSONL file. */
  line: number;
  id: string;
  request: ExtractionRequestInput;
  /** Field key → field type, from the request. */
  types: Record<string, string>;
  expected: Record<string, ExpectedValue>;
  /** Field key → the labelled source span (UTF-16 offsets in that part), where given. */
  sources: Record<string, Omit<ExtractionSource, 'type'>>;
}

/** What one field of one item gave. */
export interface ExtractionObservation {
  item: number;
  line: number;
  id: string;
  key: string;
  type: string;
  expected: ExpectedValue;
  /** null: absent (pNull ≥ 0.5) or refused. */
  value: ExpectedValue;
  guess: ExpectedValue;
  /** null where the field was refused. */
  pNull: number | null;
  confidence: number | null;
  refused: boolean;
  source: Omit<ExtractionSource, 'type'> | null;
  expectedSource: Omit<ExtractionSource, 'type'> | null;
}

export interface ExtractionMetrics {
  /** A field type ("number"), or a field key (by_field). */
  key: string;
  items: number;
  /** Share of items whose value (null when absent) equals the expected value (null included); a refusal never matches. */
  exact_match: number;
  refusals: number;
  /** Null detection over the items not refused: Brier score of pNull against "expected null". */
  null_brier: number | null;
  /** AUROC of pNull for "expected null" against "expected a value"; null when one of the two is missing. */
  null_auroc: number | null;
  /** Items expected present and not refused: the share whose guess equals the expected value. */
  guess_accuracy: number | null;
  /** Calibration of confidence against "the guess is right", items expected present: ECE, 10 bins. */
  confidence_ece: number | null;
  reliability: ReliabilityBin[];
  /** Items with a labelled span (not refused): the share whose source equals it, and the mean character IoU. */
  span_exact: number | null;
  span_iou: number | null;
  span_items: number;
}

export interface ExtractionReport {
  kind: 'extraction';
  data: { name: string; items: number };
  model: string;
  device: string;
  by_type: ExtractionMetrics[];
  by_field: ExtractionMetrics[];
  errors: { item: number; line: number; id: string; message: string }[];
  latency_ms: { mean: number; p50: number; p95: number } | null;
}
