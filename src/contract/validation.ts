/**
 * The bridge between zod and JevError. Schemas report custom problems with `addIssue`, naming a
 * message of the table in messages.ts; `parseWith` turns the most top-level issue of a failed
 * parse into a JevError whose `param` is the offending field's path and whose message names it.
 */
import './zod-config.ts';
import type { z } from 'zod';
import { JevError, isErrorCode } from './errors.ts';
import type { ErrorCode } from './errors.ts';
import { expectedName, validationMessage } from './messages.ts';
import type { MessageArgs, MessageKind } from './messages.ts';
import { formatParam, toPath, valueAt } from './param-path.ts';
import type { Path, PathSegment } from './param-path.ts';

type Issue = z.core.$ZodIssue;
type Ctx = Pick<z.core.$RefinementCtx, 'addIssue'>;

interface JevIssueParams {
  kind: MessageKind;
  args: readonly unknown[];
  code: ErrorCode;
}

/** Reports a problem from inside a schema (refinement or transform), as a message of the table. */
export function addIssue<K extends MessageKind>(
  ctx: Ctx,
  kind: K,
  args: MessageArgs<K>,
  opts: { path?: readonly PathSegment[]; code?: ErrorCode } = {},
): void {
  const jev: JevIssueParams = { kind, args, code: opts.code ?? 'invalid_request' };
  ctx.addIssue({ code: 'custom', message: kind, path: [...(opts.path ?? [])], params: { jev }, input: undefined });
}

/** A check on a list's length, reported with the list's noun ("options", "grade labels"). */
export function lengthBetween(ctx: Ctx, length: number, min: number, max: number, noun: string, path: Path = []): boolean {
  if (length < min) addIssue(ctx, 'tooFew', [min, length, noun], { path });
  else if (length > max) addIssue(ctx, 'tooMany', [max, length, noun], { path });
  else return true;
  return false;
}

/** An object literal or JSON object (of any realm), or a null-prototype object; not an array. */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === null || Object.getPrototypeOf(proto) === null;
}

function jevParams(issue: Issue): JevIssueParams | undefined {
  if (issue.code !== 'custom') return undefined;
  const jev: unknown = issue.params?.['jev'];
  if (typeof jev !== 'object' || jev === null) return undefined;
  const p = jev as Partial<JevIssueParams>;
  if (typeof p.kind !== 'string' || !Array.isArray(p.args) || !isErrorCode(p.code)) return undefined;
  return p as JevIssueParams;
}

function messageFor(issue: Issue, param: string, root: unknown, path: Path): string {
  const { found, value } = valueAt(root, path);
  switch (issue.code) {
    case 'invalid_type': {
      if (!found || value === undefined) return validationMessage('required', param, []);
      if (issue.expected === 'int') return validationMessage('notInteger', param, [value]);
      if (issue.expected === 'number' && typeof value === 'number') return validationMessage('notFinite', param, [value]);
      return validationMessage('wrongType', param, [expectedName(issue.expected), value]);
    }
    case 'too_small': {
      const min = Number(issue.minimum);
      if (issue.origin === 'string') return validationMessage('emptyString', param, []);
      if (issue.origin === 'array' && Array.isArray(value)) return validationMessage('tooFew', param, [min, value.length, 'items']);
      return validationMessage('numberTooSmall', param, [min, issue.inclusive ?? true, value]);
    }
    case 'too_big': {
      const max = Number(issue.maximum);
      if (issue.origin === 'string' && typeof value === 'string') return validationMessage('stringTooLong', param, [max, value.length]);
      if (issue.origin === 'array' && Array.isArray(value)) return validationMessage('tooMany', param, [max, value.length, 'items']);
      return validationMessage('numberTooBig', param, [max, issue.inclusive ?? true, value]);
    }
    case 'invalid_value':
      return validationMessage('oneOf', param, [issue.values.map(String), value]);
    case 'invalid_union':
      if ('options' in issue && issue.options !== undefined) {
        const options = issue.options;
        return found && value !== undefined
          ? validationMessage('oneOf', param, [options.map(String), value])
          : validationMessage('required', param, []);
      }
      return validationMessage('invalid', param, []);
    default:
      return validationMessage('invalid', param, []);
  }
}

/** The JevError for one zod issue, read against the body it came from. */
export function issueToError(issue: Issue, root: unknown): JevError {
  const path: PathSegment[] = toPath(issue.path);
  if (issue.code === 'unrecognized_keys' && issue.keys[0] !== undefined) path.push(issue.keys[0]);
  const param = formatParam(path);
  const shown = param ?? 'body';
  const jev = jevParams(issue);
  const details = { path };
  if (jev !== undefined) {
    const message = validationMessage(jev.kind, shown, jev.args as MessageArgs<typeof jev.kind>);
    return new JevError(jev.code, message, { param, details });
  }
  return new JevError('invalid_request', messageFor(issue, shown, root, path), { param, details });
}

/**
 * The issue to report: the most top-level one (shortest path), first in field order among
 * equals, so "too many questions" wins over a fault inside one question.
 */
export function pickIssue(issues: readonly Issue[]): Issue | undefined {
  let best: Issue | undefined;
  for (const issue of issues) if (best === undefined || issue.path.length < best.path.length) best = issue;
  return best;
}

/** Parses `body` with `schema`, or throws the JevError of its most top-level problem. */
export function parseWith<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  let result: ReturnType<S['safeParse']>;
  try {
    result = schema.safeParse(body) as ReturnType<S['safeParse']>;
  } catch (e) {
    // A body zod cannot even walk (a getter that throws, a revoked proxy): a caller's fault.
    throw new JevError('invalid_request', validationMessage('invalid', 'body', []), { cause: e });
  }
  if (result.success) return result.data as z.output<S>;
  const issue = pickIssue(result.error.issues);
  if (issue === undefined) throw new JevError('invalid_request', validationMessage('invalid', 'body', []));
  throw issueToError(issue, body);
}
