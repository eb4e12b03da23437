/**
 * The evaluation (docs/evaluation.md): labelled data sets, metrics, fitted calibration profiles,
 * the run over an engine and its report. Pure: no DOM, no Node; the CLI (scripts/eval) and the
 * playground (src/ui) both use it.
 */
export * from './types.ts';
export * from './dataset-error.ts';
export * from './dataset-label.ts';
export * from './dataset.ts';
export * from './observe.ts';
export * from './metrics.ts';
export * from './calibration-fit.ts';
export * from './evaluate.ts';
export * from './svg.ts';
export * from './report-markdown.ts';
export * from './extraction-types.ts';
export * from './extraction-dataset.ts';
export * from './extraction-metrics.ts';
export * from './extraction-evaluate.ts';
export * from './extraction-report.ts';
