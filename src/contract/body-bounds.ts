/**
 * The shape bounds of a whole request body, checked by one bounded, iterative walk before anything
 * walks the body recursively (structured clone into the worker, zod, the state's JSON rendering).
 * A body past them is refused with 400 `invalid_request` naming the field that holds the excess, at
 * any depth or size, and nothing else of it is read. The request parsers then apply the exact limits
 * of each field (limits.ts); these bounds sit above every one of those, so they never refuse a body
 * the parsers would accept.
 *
 * - depth: at most `limits.maxBodyDepth` levels of objects and arrays (a circular body meets it too);
 * - size: at most `limits.maxBodyNodes` values in all (keys' values and array items);
 * - strings: at most `limits.maxBodyBytes` characters each (no HTTP body can carry more);
 * - values that no JSON body carries and no worker can receive (functions, symbols, bigints);
 * - a value that cannot be read (a getter or a proxy's trap that throws) is refused where it sits.
 */
import { JevError } from './errors.ts';
import { limits } from './limits.ts';
import { type MessageArgs, validationMessage } from './messages.ts';
import { formatParam, type PathSegment } from './param-path.ts';

/** An object or array being walked: its keys (null for an array), the next index, and its own segment. */
interface Frame {
  value: object;
  keys: string[] | null;
  length: number;
  next: number;
  segment: PathSegment | null;
}

/** Throws the JevError of the first bound the body passes; returns when it is within all of them. */
export function checkBodyBounds(body: unknown): void {
  walk(body);
}

/**
 * Reads one step of the body. A body that cannot even be read (a getter that throws, a proxy whose
 * traps throw, a revoked proxy) is the caller's fault: 400 naming the value that could not be read.
 */
function read<T>(path: () => readonly PathSegment[], step: () => T): T {
  try {
    return step();
  } catch (e) {
    const param = path().length > 0 ? formatParam(path()) : null;
    throw new JevError('invalid_request', validationMessage('unreadable', param ?? 'body', [e]), { param, cause: e });
  }
}

/** Depth first, one frame per open container (memory grows with depth, never with width). */
function walk(body: unknown): void {
  const stack: Frame[] = [];
  const pathOf = (last?: PathSegment) => {
    const path = stack.slice(1).map((f) => f.segment!);
    return last === undefined ? path : [...path, last];
  };
  let nodes = 0;
  const visit = (value: unknown, segment: PathSegment | null): void => {
    if (++nodes > limits.maxBodyNodes) refuse('bodyTooLarge', field(pathOf(segment ?? undefined)), [limits.maxBodyNodes]);
    switch (typeof value) {
      case 'string':
        if (value.length > limits.maxBodyBytes) refuse('stringTooLong', formatParam(pathOf(segment ?? undefined)), [limits.maxBodyBytes, value.length]);
        return;
      case 'function':
      case 'symbol':
      case 'bigint':
        refuse('notJsonData', formatParam(pathOf(segment ?? undefined)), [value]);
        return;
      case 'object':
        if (value === null) return;
        break;
      default:
        return;
    }
    if (stack.length >= limits.maxBodyDepth) refuse('bodyTooDeep', field(pathOf(segment ?? undefined)), [limits.maxBodyDepth]);
    const here = () => pathOf(segment ?? undefined);
    const keys = read(here, () => (Array.isArray(value) ? null : Object.keys(value)));
    const length = keys ? keys.length : read(here, () => (value as unknown[]).length);
    // Counted before it is walked: a huge container is refused before its first member is read.
    if (nodes + length > limits.maxBodyNodes) refuse('bodyTooLarge', field(pathOf(segment ?? undefined)), [limits.maxBodyNodes]);
    stack.push({ value, keys, length, next: 0, segment });
  };
  visit(body, null);
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (top.next >= top.length) {
      stack.pop();
      continue;
    }
    const i = top.next++;
    const segment = top.keys === null ? i : top.keys[i]!;
    visit(read(() => pathOf(segment), () => (top.value as Record<PathSegment, unknown>)[segment]), segment);
  }
}

/**
 * The field a depth or size excess is reported on: a field of the body (`state`, `metadata`), or a
 * field of one member of its lists and maps (`messages[3].content`, `tools[0].function`,
 * `questions.mood.criteria`), never a path hundreds of levels down; null for a body that is an array.
 */
function field(path: readonly PathSegment[]): string | null {
  if (typeof path[0] !== 'string') return null;
  return formatParam(path.slice(0, MEMBER_LISTS.has(path[0]) ? 3 : 1));
}

/** The body's fields whose members have fields of their own (a chat's messages and tools, a decision's questions). */
const MEMBER_LISTS = new Set(['messages', 'tools', 'questions']);

function refuse<K extends 'bodyTooLarge' | 'bodyTooDeep' | 'stringTooLong' | 'notJsonData'>(
  kind: K,
  param: string | null,
  args: MessageArgs<K>,
): never {
  throw new JevError('invalid_request', validationMessage(kind, param ?? 'body', args), { param });
}
