/**
 * What the schema compiler cannot enforce exactly: the keyword's path (relative to the schema the
 * compiler was given) and why. The grammar backend answers it 400 `invalid_request` with `param`
 * at that keyword (xgrammar-backend.ts); the compiler never drops a constraint silently.
 */
import type { PathSegment } from '../../../contract/index.ts';

export class SchemaRefusal extends Error {
  constructor(readonly path: PathSegment[], readonly reason: string) {
    super(reason);
    this.name = 'SchemaRefusal';
  }

  /** The same refusal, found under `prefix`. */
  under(prefix: readonly PathSegment[]): SchemaRefusal {
    return new SchemaRefusal([...prefix, ...this.path], this.reason);
  }
}

/** Runs `f`; a refusal it throws is placed under `prefix`. */
export function refusedAt<T>(prefix: readonly PathSegment[], f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof SchemaRefusal) throw e.under(prefix);
    throw e;
  }
}
