/**
 * A problem with a labelled data set, named by where it is: the 1-based line (JSONL) or row
 * (CSV, the header excluded), and the field, as a dotted path (`labels.intent`,
 * `request.questions.q.type`). Thrown by the parsers and by `observe` (a label that is not one
 * of its question's answers).
 */
export class DatasetError extends Error {
  override readonly name = 'DatasetError';
  constructor(
    message: string,
    readonly line: number | null,
    readonly field: string | null,
  ) {
    super(line === null ? message : `line ${line}${field ? `, ${field}` : ''}: ${message}`);
  }
}
