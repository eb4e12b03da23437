import { describe, expect, it } from 'vitest';
import { JevError, codeForStatus, errorCodes, toJevError } from '../../src/contract/index.ts';
import type { ErrorBody, ErrorCode } from '../../src/contract/index.ts';

describe('JevError', () => {
  it('takes its status from the code table and its type from the status', () => {
    for (const code of Object.keys(errorCodes) as ErrorCode[]) {
      const e = new JevError(code, 'm');
      expect(e.status).toBe(errorCodes[code]);
      expect(e.type).toBe(errorCodes[code] >= 500 ? 'server_error' : 'invalid_request_error');
      expect(e.name).toBe('JevError');
      expect(e).toBeInstanceOf(Error);
      expect(JevError.is(e)).toBe(true);
    }
    expect(new JevError('model_not_found', 'm').status).toBe(404);
    expect(new JevError('aborted', 'm').status).toBe(499);
    expect(new JevError('engine_unavailable', 'm').type).toBe('server_error');
  });

  it('defaults param to null and keeps details and cause', () => {
    const cause = new Error('inner');
    const e = new JevError('invalid_request', 'bad', { param: 'state', details: { path: ['state'] }, cause });
    expect(e.param).toBe('state');
    expect(e.details).toEqual({ path: ['state'] });
    expect(e.cause).toBe(cause);
    expect(new JevError('invalid_request', 'bad').param).toBeNull();
  });

  it('round-trips through toBody/fromBody', () => {
    const e = new JevError('context_length_exceeded', 'too long', { param: 'messages' });
    const body = e.toBody();
    expect(body).toEqual({
      error: { message: 'too long', type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded', retriable: false },
    });
    const back = JevError.fromBody(JSON.parse(JSON.stringify(body)) as ErrorBody, 422);
    expect(back).toBeInstanceOf(JevError);
    expect(back.toBody()).toEqual(body);
    expect(back.status).toBe(422);
  });

  it('maps a foreign code from the status and keeps it in details', () => {
    const body = { error: { message: 'slow down', type: 'rate_limit', param: null, code: 'rate_limited' } } as unknown as ErrorBody;
    const e = JevError.fromBody(body, 429);
    expect(e.code).toBe('queue_full');
    expect(e.details).toEqual({ upstreamCode: 'rate_limited' });
    expect(JevError.fromBody(body, 503).code).toBe('engine_unavailable');
    expect(JevError.fromBody(body, 418).code).toBe('invalid_request');
    expect(JevError.fromBody({} as ErrorBody, 404).code).toBe('not_found');
    expect(codeForStatus(401)).toBe('unauthorized');
    expect(codeForStatus(500)).toBe('engine_error');
  });

  it('says which refusals may be retried unchanged: busy, restarting or unreachable engines, nothing the caller sent', () => {
    const retriable = (Object.keys(errorCodes) as ErrorCode[]).filter((code) => new JevError(code, 'm').retriable);
    expect(retriable.sort()).toEqual(['backend_timeout', 'backend_unavailable', 'engine_unavailable', 'queue_full']);
    for (const code of retriable) expect(errorCodes[code]).toBeGreaterThanOrEqual(429);
    // An error may say otherwise (a load cut off by the network), and that survives the wire and the worker boundary.
    const cut = new JevError('model_load_failed', 'network cut', { retriable: true });
    expect(cut.toBody().error.retriable).toBe(true);
    expect(JevError.fromBody(JSON.parse(JSON.stringify(cut.toBody())) as ErrorBody, 503).retriable).toBe(true);
    expect(toJevError(structuredClone(cut.toJSON())).retriable).toBe(true);
    // A foreign body without the field: the mapped code decides.
    const foreign = { error: { message: 'slow down', type: 'rate_limit', param: null, code: 'rate_limited' } } as unknown as ErrorBody;
    expect(JevError.fromBody(foreign, 429).retriable).toBe(true);
    expect(JevError.fromBody(foreign, 400).retriable).toBe(false);
  });

  it('round-trips through toJSON (a structured-clone-safe value)', () => {
    const e = new JevError('model_load_failed', 'no weights', { param: null, details: { file: 'model.onnx' } });
    const json = e.toJSON();
    expect(json).toEqual({
      name: 'JevError', code: 'model_load_failed', message: 'no weights', param: null, status: 503, type: 'server_error', retriable: false,
      details: { file: 'model.onnx' },
    });
    const cloned = structuredClone(json);
    const back = toJevError(cloned);
    expect(back).toBeInstanceOf(JevError);
    expect(back.toJSON()).toEqual(json);
    expect(JSON.parse(JSON.stringify(e))).toEqual(json);
  });
});

describe('toJevError', () => {
  it('passes a JevError through', () => {
    const e = new JevError('not_found', 'x');
    expect(toJevError(e)).toBe(e);
  });

  it('turns a DOMException AbortError into aborted (499)', () => {
    const e = toJevError(new DOMException('The user aborted a request.', 'AbortError'));
    expect(e.code).toBe('aborted');
    expect(e.status).toBe(499);
    expect(e.message).toBe('The user aborted a request.');
  });

  it('turns an AbortSignal reason and a TimeoutError into aborted', () => {
    const c = new AbortController();
    c.abort();
    expect(toJevError(c.signal.reason).code).toBe('aborted');
    expect(toJevError(new DOMException('', 'TimeoutError')).code).toBe('aborted');
    expect(toJevError(new DOMException('', 'TimeoutError')).message).toBe('The request was aborted.');
  });

  it('turns any other Error into engine_error carrying its message', () => {
    const cause = new TypeError('boom');
    const e = toJevError(cause);
    expect(e.code).toBe('engine_error');
    expect(e.status).toBe(500);
    expect(e.type).toBe('server_error');
    expect(e.message).toBe('boom');
    expect(e.cause).toBe(cause);
  });

  it('survives values that are not errors', () => {
    expect(toJevError('plain string').message).toBe('plain string');
    expect(toJevError(undefined).code).toBe('engine_error');
    expect(toJevError({ message: 'obj' }).message).toBe('obj');
    expect(toJevError(Object.create(null)).code).toBe('engine_error');
  });
});
