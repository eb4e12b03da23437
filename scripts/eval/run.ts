/**
 * `npm run eval -- --data FILE.jsonl [--model ID --host URL --dtype D --device D] [--out DIR]
 *                  [--fit PROFILE_ID] [--profile FILE.json] [--alpha A] [--limit N]`  (--help: all)
 *
 * Evaluates a labelled data set (docs/evaluation.md): the answers come from the real engine in
 * headless Chromium (browser-engine.ts), the metrics are computed here, in Node, by the same
 * src/evaluation code the playground runs. Calibrate off and on side by side, a saved profile as
 * one more mode, and with --fit a profile fitted and checked on held-out items.
 *
 * Exit codes: 0 done; 1 failed (or every request failed); 2 bad usage or bad data (the message
 * names the line and the field); 3 the model did not load; 130 interrupted.
 */
import { readFileSync } from 'node:fs';
import { basename, extname, join, relative, resolve } from 'node:path';
import { calibrationProfileSchema, JevError, parseWith, type CalibrationProfile, type QuestionInput } from '../../src/contract/index.ts';
import {
  DatasetError,
  isExtractionSet,
  modeTitle,
  parseExtractionSet,
  parseDataset,
  runEvaluation,
  type EvaluationModeOptions,
  type EvaluationReport,
  type Observation,
} from '../../src/evaluation/index.ts';
import { appFolder, REPO } from './app-build.ts';
import { parseArgs, USAGE, UsageError, type EvalArgs } from './args.ts';
import { checkLocalModel, ModelLoadError, openBrowserEngine } from './browser-engine.ts';
import { progressBar } from './progress.ts';
import { extractionSummary, runExtractionSet } from './run-extraction.ts';
import { writeReport } from './write-report.ts';

const log = (line: string) => process.stderr.write(`eval: ${line}\n`);

/** A problem with what the user gave (options, files): exit code 2. */
class InputError extends Error {}

function readText(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new InputError(`cannot read ${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

function readJson(path: string, what: string): unknown {
  const text = readText(path, what);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new InputError(`${what} ${path} is not valid JSON: ${(e as Error).message}`);
  }
}

function readProfile(path: string): CalibrationProfile {
  try {
    return parseWith(calibrationProfileSchema, readJson(path, '--profile'));
  } catch (e) {
    if (e instanceof JevError) throw new InputError(`--profile ${path} is not a calibration profile: ${e.message}`);
    throw e;
  }
}

/** A labelled extraction set (docs/evaluation.md, "Extraction sets"): one mode, no profiles. */
async function mainExtraction(args: EvalArgs, dataPath: string, text: string): Promise<number> {
  if (args.fit !== null || args.profile !== null || args.questions !== null) {
    throw new InputError('--fit, --profile and --questions are for decision sets; an extraction set takes none of them');
  }
  let items;
  try {
    items = parseExtractionSet(text);
  } catch (e) {
    if (e instanceof DatasetError) throw new InputError(`${args.data}: ${e.message}`);
    throw e;
  }
  if (args.limit !== null) items = items.slice(0, args.limit);
  const out = resolve(args.out ?? join(REPO, 'eval-results', basename(dataPath, extname(dataPath))));
  if (args.host === null) checkLocalModel(args.model);
  const app = await appFolder(args.app, log);
  const engine = await openBrowserEngine({ app, port: args.port, model: args.model, host: args.host, device: args.device, dtype: args.dtype, loadTimeoutMs: args.timeoutS * 1000, log });
  const abort = new AbortController();
  const onSignal = () => abort.abort(new Error('interrupted'));
  process.once('SIGINT', onSignal);
  try {
    log(`loaded ${engine.status.version ?? engine.status.model} on ${engine.status.device}; ${items.length} extraction items`);
    const { report, written } = await runExtractionSet({ items, dataName: basename(dataPath), engine, out, signal: abort.signal });
    process.stdout.write(extractionSummary(report));
    log(`wrote ${written.length} files to ${shownPath(out)} (report.md, report.json, observations.jsonl, SVGs)`);
    if (report.errors.length > 0) log(`${report.errors.length} request(s) failed (first: ${report.errors[0]!.message}); see report.md`);
    return report.errors.length === items.length ? 1 : 0;
  } finally {
    process.off('SIGINT', onSignal);
    await engine.close();
  }
}

async function main(args: EvalArgs): Promise<number> {
  const dataPath = resolve(args.data);
  if (extname(dataPath) !== '.csv') {
    const text = readText(dataPath, '--data');
    if (isExtractionSet(text)) return mainExtraction(args, dataPath, text);
  }
  const questions = args.questions === null ? undefined : (readJson(args.questions, '--questions') as Record<string, QuestionInput>);
  let items;
  try {
    items = parseDataset(dataPath, readText(dataPath, '--data'), questions);
  } catch (e) {
    if (e instanceof DatasetError) throw new InputError(`${args.data}: ${e.message}`);
    throw e;
  }
  if (args.limit !== null) items = items.slice(0, args.limit);
  const profile = args.profile === null ? null : readProfile(args.profile);
  const dataName = basename(dataPath, extname(dataPath));
  const out = resolve(args.out ?? join(REPO, 'eval-results', dataName));

  const modes: EvaluationModeOptions[] = [{ calibrate: false }, { calibrate: true }];
  if (profile) modes.push({ calibrate: profile.calibrate, profile, alpha: args.alpha });
  const fit = args.fit === null ? null : {
    id: args.fit,
    ...(args.holdout === null ? {} : { holdout: args.holdout }),
    ...(args.seed === null ? {} : { seed: args.seed }),
    ...(args.alpha === null ? {} : { alpha: args.alpha }),
  };

  if (args.host === null) checkLocalModel(args.model);
  const app = await appFolder(args.app, log);
  const engine = await openBrowserEngine({
    app,
    port: args.port,
    model: args.model,
    host: args.host,
    device: args.device,
    dtype: args.dtype,
    loadTimeoutMs: args.timeoutS * 1000,
    log,
  });
  const abort = new AbortController();
  const onSignal = () => abort.abort(new Error('interrupted'));
  process.once('SIGINT', onSignal);
  try {
    const { status } = engine;
    log(`loaded ${status.version ?? status.model} on ${status.device}${status.threads ? ` (${status.threads} threads)` : ''}; ${items.length} items`);
    if (profile && status.version && profile.model !== status.version) {
      // The engine refuses such a profile on every request (422): say it once, before any.
      throw new InputError(`--profile ${args.profile}: profile "${profile.id}" was fitted on ${profile.model}, but the loaded model is ${status.version}; fit one for it (--fit ID)`);
    }
    const observations = new Map<number, readonly Observation[]>();
    const bar = progressBar();
    let report: EvaluationReport;
    try {
      report = await runEvaluation({
        items,
        dataName: basename(dataPath),
        decide: engine.decide,
        modes,
        fit,
        signal: abort.signal,
        onProgress: (p) => bar.update(p),
        onObservations: (mode, list) => observations.set(mode, list),
      });
    } finally {
      bar.done();
    }
    if (status.device && report.device === 'unknown') report.device = status.device;
    const written = writeReport(out, report, items, observations);
    printSummary(report);
    log(`wrote ${written.length} files to ${shownPath(out)} (report.md, report.json, observations.jsonl${report.fit ? ', profile.json' : ''}, SVGs)`);
    const failed = report.modes.reduce((n, m) => n + m.errors.length, 0);
    if (failed > 0) log(`${failed} request(s) failed; see report.md`);
    const allFailed = report.modes.every((m) => m.questions.length === 0 && m.errors.length > 0);
    return allFailed ? 1 : 0;
  } finally {
    process.off('SIGINT', onSignal);
    await engine.close();
  }
}

/** A path relative to the working directory when it lies under it, else absolute. */
function shownPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === '' ? '.' : rel.startsWith('..') ? path : rel;
}

function printSummary(report: EvaluationReport): void {
  const lines = [`model ${report.model} on ${report.device}, ${report.data.items} items`];
  report.modes.forEach((mode, m) => {
    lines.push(`mode ${m + 1}: ${modeTitle(mode)}`);
    for (const q of mode.questions) {
      const head = q.type === 'score' ? `MAE ${q.mae?.toFixed(3)}` : `macro-F1 ${q.macro_f1?.toFixed(3)}`;
      const sets = q.prediction_sets ? `, set coverage ${q.prediction_sets.coverage.toFixed(3)}${q.prediction_sets.cross_fold ? ' (2-fold cross-conformal)' : ''} (size ${q.prediction_sets.mean_size.toFixed(2)})` : '';
      lines.push(
        `  ${q.key} (${q.type}, ${q.items}): accuracy ${q.accuracy.toFixed(3)}, ${head}, Brier ${q.brier.toFixed(3)}, log loss ${q.log_loss.toFixed(3)}, ECE ${q.ece.toFixed(3)}${sets}`,
      );
    }
  });
  if (report.fit) {
    lines.push(`profile ${report.fit.profile.id}: fitted on ${report.fit.fit_items.length} items, checked on ${report.fit.holdout_items.length} held out`);
    for (const q of Object.values(report.fit.profile.questions)) {
      const h = q.holdout;
      const fit = q.fit.method === 'temperature' ? `T = ${q.fit.temperature.toFixed(3)}` : q.fit.method === 'platt' ? `a = ${q.fit.a.toFixed(3)}, b = ${q.fit.b.toFixed(3)}` : 'identity';
      lines.push(`  ${q.key}: ${fit}${h ? `; held-out ECE ${h.ece_before.toFixed(3)} -> ${h.ece_after.toFixed(3)}, log loss ${h.log_loss_before.toFixed(3)} -> ${h.log_loss_after.toFixed(3)}` : ''}`);
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

async function cli(argv: readonly string[]): Promise<number> {
  let args: EvalArgs | null;
  try {
    args = parseArgs(argv);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`eval: ${e.message}\n(npm run eval -- --help for the options)\n`);
      return 2;
    }
    throw e;
  }
  if (args === null) {
    process.stdout.write(USAGE);
    return 0;
  }
  try {
    return await main(args);
  } catch (e) {
    if (e instanceof InputError) {
      process.stderr.write(`eval: ${e.message}\n`);
      return 2;
    }
    if (e instanceof ModelLoadError) {
      process.stderr.write(`eval: ${e.message}\n`);
      return 3;
    }
    if (e instanceof Error && e.message === 'interrupted') {
      process.stderr.write('eval: interrupted\n');
      return 130;
    }
    process.stderr.write(`eval: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    return 1;
  }
}

process.exitCode = await cli(process.argv.slice(2));
