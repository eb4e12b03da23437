/** What the page shows of a failed call: words, and where (the request field it names). */
export interface ErrorInfo {
  message: string;
  /** The request field at fault (`error.param`), e.g. `questions.mood.criteria`, or null. */
  param: string | null;
  code: string | null;
  status: number | null;
  /** Why a model did not load (`details.reason`: host_unreachable, cors_refused, …), or null. */
  reason: string | null;
  /** The error's `details`, as sent (e.g. an insufficient_memory refusal's bytes and alternative), or null. */
  details?: Record<string, unknown> | null;
}

export function isAbort(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { name?: unknown }).name === 'AbortError';
}

/** Reads a JevError (or anything thrown) without trusting its shape. */
export function errorInfo(e: unknown): ErrorInfo {
  const body = typeof e === 'object' && e !== null ? (e as { error?: unknown }).error : undefined;
  const obj = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const own = typeof e === 'object' && e !== null ? (e as Record<string, unknown>) : {};
  const pick = (k: string): unknown => obj[k] ?? own[k];
  const message = pick('message');
  const param = pick('param');
  const code = pick('code');
  const status = own['status'];
  const details = own['details'];
  const reason = typeof details === 'object' && details !== null ? (details as Record<string, unknown>)['reason'] : undefined;
  return {
    message: typeof message === 'string' && message !== '' ? message : String(e),
    param: typeof param === 'string' ? param : null,
    code: typeof code === 'string' ? code : null,
    status: typeof status === 'number' ? status : null,
    reason: typeof reason === 'string' ? reason : null,
    details: typeof details === 'object' && details !== null ? (details as Record<string, unknown>) : null,
  };
}
