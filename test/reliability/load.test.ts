// Load: 50 concurrent mixed requests from several callers (facade and HTTP; decisions, streamed
// and plain chats at temperature 0 or with a seed). Each answer equals the same request served
// alone; the engine ends healthy, holding no more tensors than its conversation cache.
import OpenAI from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.ts';
import type { JevClient } from '../../src/facade/jev-client.ts';
import { localClient } from '../support/local-client.ts';
import { GENERATED, TINY } from '../support/models.ts';
import { mixedJobs, outcomeDiff, serve, type Job, type Outcome } from './workload.ts';

const CALLERS = 5;
const PER_CALLER = 10;

describe('load: 50 concurrent mixed requests', () => {
  let client: JevClient;
  let engine: Engine;
  const jobs: Job[] = mixedJobs(4242, CALLERS * PER_CALLER);
  const alone: Outcome[] = [];

  beforeAll(async () => {
    ({ client, engine } = await localClient(GENERATED, TINY));
    for (const job of jobs) alone.push(await serve(client, job));
  });

  it('each answer equals the same request served alone', async () => {
    expect(jobs.filter((j) => j.kind === 'decision').length).toBe(25);
    expect(jobs.filter((j) => j.kind === 'chat' && j.stream).length).toBeGreaterThan(5);
    expect(jobs.filter((j) => j.via === 'http').length).toBeGreaterThan(5);
    // Caller c sends jobs c, c+5, c+10, …: all 50 are in flight at once.
    const callers = Array.from({ length: CALLERS }, (_, c) => jobs.map((job, i) => ({ job, i })).filter(({ i }) => i % CALLERS === c));
    const results: Outcome[] = new Array(jobs.length);
    await Promise.all(callers.map((mine) => Promise.all(mine.map(async ({ job, i }) => void (results[i] = await serve(client, job))))));
    // Within 1e-6: which earlier prompts the prefix cache holds depends on the order they ran in.
    for (let i = 0; i < jobs.length; i++) expect(outcomeDiff(results[i], alone[i]), `job ${i} (${jobs[i]!.kind} via ${jobs[i]!.via})`).toEqual([]);
  });

  it('the openai client, as one more caller among concurrent facade calls, gets the answers it gets alone', async () => {
    const openai = new OpenAI({ apiKey: 'local', baseURL: 'http://localhost/v1', fetch: client.fetch });
    const ask = (i: number) => openai.chat.completions.create({ model: 'jev', messages: [{ role: 'user', content: `Count to ${i}.` }], temperature: 0, max_tokens: 8 });
    const soloTexts = [];
    for (let i = 0; i < 6; i++) soloTexts.push((await ask(i)).choices[0]!.message.content);
    const together = await Promise.all([
      ...Array.from({ length: 6 }, (_, i) => ask(i).then((r) => r.choices[0]!.message.content)),
      ...jobs.slice(0, 10).map((job) => serve(client, job)),
    ]);
    expect(together.slice(0, 6)).toEqual(soloTexts);
    expect(outcomeDiff(together.slice(6), alone.slice(0, 10))).toEqual([]);
  });

  it('ends healthy: nothing queued, only the prefix cache held', async () => {
    const status = await client.status();
    expect(status.state).toBe('ready');
    expect(status.prefixCache.entries).toBeGreaterThan(0);
    expect(status.counters.liveTensors).toBe(status.prefixCache.entries * engine.languageModel!.kvInputs.length);
  });
});
