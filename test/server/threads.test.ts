/**
 * `--threads N`: the in-process engine's onnxruntime-node session runs with N intra-op threads.
 * Shown three ways that could each fail: status() reports the threads asked; the process gains
 * the intra-op pool's threads (onnxruntime starts N - 1 pool threads beside the caller, so a
 * 4-thread engine adds 3 more OS threads than a 1-thread one, read from /proc/self/task); and the
 * answers do not depend on the thread count (a decision within 1e-4 at fp32 between 1 thread and
 * the default, every core).
 */
import { readdirSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { DecisionResponse } from '../../src/contract/index.ts';
import { startServer, type RunningServer } from '../../src/server/serve.ts';
import { TINY } from '../support/models.ts';
import { embeddedOptions, post } from './support/served.ts';

const PATH = '/inference/jev/api/alpha/decisions';
const BODY = {
  model: 'jev',
  state: 'Once upon a time there was a little cat named Tom. He was very happy.',
  questions: {
    cat: { type: 'noul', instructions: 'Is there a cat in the story?' },
    mood: { type: 'choice', instructions: 'How does the story feel?', criteria: { happy: 'Joyful', sad: 'Unhappy' } },
  },
};

/** The OS threads of this process now (Linux). */
const osThreads = () => readdirSync('/proc/self/task').length;

describe.runIf(process.platform === 'linux')('--threads N on the in-process engine', () => {
  const servers: RunningServer[] = [];
  afterAll(async () => {
    for (const s of servers) await s.close();
  });

  async function decide(server: RunningServer): Promise<DecisionResponse> {
    const res = await post(server, PATH, BODY);
    expect(res.status, await res.clone().text()).toBe(200);
    return (await res.json()) as DecisionResponse;
  }

  it('runs the session with the threads asked, and answers the same as with every core', async () => {
    const before = osThreads();
    const one = await startServer(embeddedOptions(TINY, { threads: 1 }));
    servers.push(one);
    const afterOne = osThreads();
    const four = await startServer(embeddedOptions(TINY, { threads: 4 }));
    servers.push(four);
    const afterFour = osThreads();
    const all = await startServer(embeddedOptions(TINY));
    servers.push(all);

    expect((await one.engine.status()).threads).toBe(1);
    expect((await four.engine.status()).threads).toBe(4);
    expect((await all.engine.status()).threads).toBeNull();
    // Each server adds its engine's thread (and what else a load starts); the 4-thread one adds 3 pool threads more.
    expect(afterFour - afterOne - (afterOne - before)).toBeGreaterThanOrEqual(3);

    const a = await decide(one);
    const b = await decide(all);
    const c = await decide(four);
    for (const other of [b, c]) {
      const [x, y] = [a.answers['cat'], other.answers['cat']];
      if (x?.type !== 'noul' || y?.type !== 'noul') throw new Error('cat is a noul question');
      expect(Math.abs(x.noul - y.noul)).toBeLessThan(1e-4);
      const [m, n] = [a.answers['mood'], other.answers['mood']];
      if (m?.type !== 'choice' || n?.type !== 'choice') throw new Error('mood is a choice question');
      for (const k of ['happy', 'sad']) expect(Math.abs(m.probabilities[k]! - n.probabilities[k]!)).toBeLessThan(1e-4);
    }
  }, 180_000);
});
