/**
 * One evaluation run in the playground, as a hook: read the dropped file, parse it
 * (src/evaluation/dataset.ts), run it through this tab's engine (src/evaluation/evaluate.ts, with
 * `client.decisions.create` as the decide function), follow its progress, stop it. Nothing leaves
 * the page: the file is read here and every request goes to the engine in this tab.
 */
import { useRef, useState } from 'preact/hooks';
import type { QuestionInput } from '../../contract/index.ts';
import { DatasetError } from '../../evaluation/dataset-error.ts';
import { parseDataset } from '../../evaluation/dataset.ts';
import { runEvaluation } from '../../evaluation/evaluate.ts';
import type { EvalItem, EvaluationProgress, EvaluationReport } from '../../evaluation/types.ts';
import type { JevClient } from '../../facade/jev-client.ts';
import { errorInfo, isAbort } from '../state/error-info.ts';

/** A problem shown in the section: where it is (line and field of the set), and what. */
export interface EvalProblem {
  message: string;
  line: number | null;
  field: string | null;
}

/** A set read from a file, ready to run. */
export interface LoadedSet {
  fileName: string;
  items: EvalItem[];
}

export type EvalStatus =
  | { phase: 'empty' }
  | { phase: 'invalid'; fileName: string; problem: EvalProblem }
  | { phase: 'ready'; set: LoadedSet }
  | { phase: 'running'; set: LoadedSet; progress: EvaluationProgress | null }
  | { phase: 'stopped'; set: LoadedSet; progress: EvaluationProgress | null }
  | { phase: 'failed'; set: LoadedSet; problem: EvalProblem }
  | { phase: 'done'; set: LoadedSet; report: EvaluationReport };

export interface RunOptions {
  /** Fit a calibration profile with this id on the calibrate-off answers, and check it on held-out items. */
  fit: { id: string; alpha: number | null } | null;
}

/** A DatasetError's message without the "line N, field: " its constructor put in front. */
function bareMessage(e: DatasetError): string {
  const prefix = e.line === null ? '' : `line ${e.line}${e.field ? `, ${e.field}` : ''}: `;
  return prefix && e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
}

export function problemOf(e: unknown): EvalProblem {
  if (e instanceof DatasetError) return { message: bareMessage(e), line: e.line, field: e.field };
  return { message: errorInfo(e).message, line: null, field: null };
}

/** "line 3, field labels.team: …", or just the message where the set does not say where. */
export function describeProblem(p: EvalProblem): string {
  const where = [p.line !== null ? `line ${p.line}` : null, p.field ? `field ${p.field}` : null].filter((x) => x !== null);
  return where.length > 0 ? `${where.join(', ')}: ${p.message}` : p.message;
}

export function useEvaluation(client: JevClient) {
  const [status, setStatus] = useState<EvalStatus>({ phase: 'empty' });
  const controller = useRef<AbortController | null>(null);

  /** Reads and parses a file; a CSV takes its questions from the decision form. */
  async function load(file: File, questions: Record<string, QuestionInput>) {
    if (controller.current) return;
    try {
      const text = await file.text();
      setStatus({ phase: 'ready', set: { fileName: file.name, items: parseDataset(file.name, text, questions) } });
    } catch (e) {
      setStatus({ phase: 'invalid', fileName: file.name, problem: problemOf(e) });
    }
  }

  async function run(set: LoadedSet, options: RunOptions) {
    if (controller.current) return;
    const abort = new AbortController();
    controller.current = abort;
    setStatus({ phase: 'running', set, progress: null });
    try {
      const report = await runEvaluation({
        items: set.items,
        dataName: set.fileName,
        decide: (request, o) => client.decisions.create(request, o),
        fit: options.fit ? { id: options.fit.id, ...(options.fit.alpha !== null ? { alpha: options.fit.alpha } : {}) } : null,
        signal: abort.signal,
        onProgress: (progress) => {
          if (!abort.signal.aborted) setStatus({ phase: 'running', set, progress });
        },
      });
      setStatus({ phase: 'done', set, report });
    } catch (e) {
      if (abort.signal.aborted || isAbort(e)) setStatus((s) => ({ phase: 'stopped', set, progress: s.phase === 'running' ? s.progress : null }));
      else setStatus({ phase: 'failed', set, problem: problemOf(e) });
    } finally {
      controller.current = null;
    }
  }

  const stop = () => controller.current?.abort();

  return { status, load, run, stop };
}
