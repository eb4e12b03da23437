// Bad input, in bulk: thousands of generated malformed requests (test/reliability/malformed.ts)
// through the facade and through the HTTP surface, each answered with its 4xx JSON error naming
// the field, with no unhandled rejection, and the same answers to valid requests afterwards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBodySchema, JevError } from '../../src/contract/index.ts';
import type { JevClient } from '../../src/facade/jev-client.ts';
import { localClient } from '../support/local-client.ts';
import { GENERATED, TINY } from '../support/models.ts';
import { malformedCases, PATHS, PROBE_CHAT, PROBE_DECISION, type Expected, type MalformedCase } from './malformed.ts';

const SEED = 20261201;
const COUNT = 2400; // 1,200 per endpoint
const ORIGIN = 'http://localhost';

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);

async function probes(client: JevClient) {
  const decision = await client.decisions.create(PROBE_DECISION);
  const chat = (await client.chat.completions.create(PROBE_CHAT)) as { choices: { message: { content: string }; finish_reason: string }[] };
  return { answers: decision.answers, usage: decision.usage, text: chat.choices[0]!.message.content, finish: chat.choices[0]!.finish_reason };
}

function describeCase(c: MalformedCase): string {
  return `case #${c.index} ${c.fault}`;
}

function checkError(c: MalformedCase, expected: Expected, got: { status: number; error: { code: string; param: string | null; message: string; type: string } }) {
  const label = `${describeCase(c)}: ${got.error.message.slice(0, 160)}`;
  expect({ status: got.status, code: got.error.code, param: got.error.param }, label).toEqual(expected);
  expect(got.error.type, label).toBe('invalid_request_error');
  if (expected.param !== null) expect(got.error.message, label).toContain(expected.param);
}

describe('bad input: generated malformed requests', () => {
  let client: JevClient;
  let before: Awaited<ReturnType<typeof probes>>;
  const served = { facade: 0, http: 0, byFault: new Map<string, number>() };

  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    ({ client } = await localClient(GENERATED, TINY));
    before = await probes(client);
  });
  afterAll(() => {
    process.off('unhandledRejection', onUnhandled);
  });

  it(`${COUNT} cases through the facade: each rejects with its status, code and field`, async () => {
    for (const c of malformedCases(SEED, COUNT)) {
      if (!c.facade) continue;
      const call = c.endpoint === 'decisions' ? client.decisions.create(c.body) : client.chat.completions.create(c.body);
      const error = await call.then(
        () => null,
        (e: unknown) => e,
      );
      expect(error, `${describeCase(c)} was served`).toBeInstanceOf(JevError);
      checkError(c, c.facade, error as JevError);
      served.facade += 1;
      served.byFault.set(c.fault, (served.byFault.get(c.fault) ?? 0) + 1);
    }
    expect(served.facade).toBeGreaterThanOrEqual(2000);
  });

  it(`the same ${COUNT} cases (and wire-only ones: invalid JSON, not UTF-8, content types, 413) through client.fetch`, async () => {
    for (const c of malformedCases(SEED, COUNT, { oversized: 2 })) {
      const res = await client.fetch(`${ORIGIN}${PATHS[c.endpoint]}`, {
        method: 'POST',
        headers: { 'Content-Type': c.contentType, Authorization: 'Bearer anything' },
        body: c.text,
      });
      expect(res.headers.get('content-type'), describeCase(c)).toMatch(/^application\/json/);
      const body: unknown = await res.json();
      const parsed = errorBodySchema.parse(body);
      checkError(c, c.http, { status: res.status, error: parsed.error });
      served.http += 1;
    }
    expect(served.http).toBe(COUNT);
  });

  it('covers every fault kind, with no unhandled rejection and no prototype pollution', () => {
    // Every fault kind the generator has was drawn (both endpoints).
    expect(served.byFault.size).toBeGreaterThanOrEqual(45);
    expect(unhandled).toEqual([]);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it('valid requests after the storm get the same answers as before it', async () => {
    const after = await probes(client);
    expect(after.answers).toEqual(before.answers);
    expect(after.usage).toEqual(before.usage);
    expect(after.text).toBe(before.text);
    expect(after.finish).toBe(before.finish);
    const res = await client.fetch(`${ORIGIN}${PATHS.decisions}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(PROBE_DECISION) });
    expect(res.status).toBe(200);
    expect((await res.json()).answers).toEqual(before.answers);
  });
});
