/**
 * OpenAI's Decisions shape in Chromium: the unmodified `openai` client's `decisions.create` through the
 * real service worker (`baseURL: location.origin + '/v1'`) and through `client.fetch`, and the facade's
 * `decisions.createOpenAI`, each from a cleared prefix cache, against the Jev endpoint's answers for the
 * same request written by hand (test/support/openai-decision-fixture.ts): equal bit for bit. Then the
 * refusal floor on both sides (a saved profile's), and a bad body's 400 through the service worker, in OpenAI's error shape.
 */
import { expect, test } from './support/warm-context.ts';
import { CLIENT_BUNDLE } from './support/client-bundle.ts';
import { MIRROR } from './support/env.ts';
import { parseDecisionRequest, questionFingerprint } from '../src/contract/index.ts';
import { answerOrder } from '../src/engine/decision/apply-calibration.ts';
import { expected, JEV, REQUEST } from '../test/support/openai-decision-fixture.ts';

const MODEL = 'tiny-random-llama3';

test("openai.decisions.create through the service worker and client.fetch equals the Jev endpoint's answers; refusal on both sides of the floor", async ({ page }) => {
  await page.goto(`/?model=${MODEL}&host=${encodeURIComponent(MIRROR)}&device=wasm&dtype=fp32`);
  expect(await page.evaluate(() => (window as any).jev.ready)).toMatchObject({ state: 'ready', model: MODEL });
  await page.waitForFunction(() => !!navigator.serviceWorker.controller);
  await page.addScriptTag({ path: CLIENT_BUNDLE });

  const out = await page.evaluate(
    async ({ request, jevRequest }) => {
      const { OpenAI } = globalThis as any;
      const jev = (window as any).jev;
      const options = { apiKey: 'local', dangerouslyAllowBrowser: true, maxRetries: 0 };
      const clients = {
        serviceWorker: new OpenAI({ ...options, baseURL: location.origin + '/v1' }),
        clientFetch: new OpenAI({ ...options, baseURL: 'http://jev.local/v1', fetch: jev.fetch }),
      };
      await jev.cache.clear();
      const jevAnswer = await jev.decisions.create(jevRequest);
      const openai: Record<string, unknown> = {};
      for (const [name, client] of Object.entries(clients)) {
        await jev.cache.clear();
        openai[name] = await client.decisions.create(request);
      }
      await jev.cache.clear();
      openai['facade'] = await jev.decisions.createOpenAI(request);
      const bad = await fetch('/v1/decisions', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ ...request, input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'data:image/png;base64,AA' }] }] }),
      });
      const models = await (await fetch('/v1/models')).json();
      return { jevAnswer, openai, bad: { status: bad.status, body: await bad.json() }, models };
    },
    { request: REQUEST, jevRequest: JEV },
  );

  const want = expected(out.jevAnswer);
  for (const [surface, decision] of Object.entries(out.openai) as [string, any][]) {
    expect(decision.answers, surface).toEqual(want);
    expect(decision.usage.input_tokens, surface).toBe(out.jevAnswer.usage.input_tokens);
    expect(decision.usage.output_tokens, surface).toBe(out.jevAnswer.usage.output_tokens);
    expect(decision.usage.input_tokens_details.cached_tokens, `${surface}: from a cleared cache`).toBe(0);
  }
  expect(out.bad.status).toBe(400);
  expect(out.bad.body.error).toMatchObject({ code: 'invalid_request', param: 'input[0].content[0]', type: 'invalid_request_error' });
  expect(out.bad.body.error.message).toMatch(/text only/);
  for (const m of out.models.data) expect(m.decision_endpoints).toContain('/v1/decisions');

  // The floor, from a calibration profile saved in the page's client (identity fits: the label
  // masses are the engine's): at the lowest label mass that question answers; just above it, it alone refuses.
  const masses = Object.entries(out.jevAnswer.answers as Record<string, { answer_mass: number }>)
    .map(([key, a]) => [key, a.answer_mass] as const)
    .sort((x, y) => x[1] - y[1]);
  const [lowKey, low] = masses[0]!;
  const next = masses[1]![1];
  expect(next).toBeGreaterThan(low);
  const index = Object.keys(JEV.questions).indexOf(lowKey);
  const questions = Object.fromEntries(
    Object.entries(parseDecisionRequest(JEV).questions).map(([key, q]) => [
      questionFingerprint(q),
      { key, type: q.type, answers: answerOrder(q), fit: { method: 'identity' }, conformal: null, fit_items: 0, holdout: null },
    ]),
  );
  for (const [floor, refused] of [
    [low, false],
    [(low + next) / 2, true],
  ] as const) {
    const profile = { object: 'calibration_profile', id: `floor-${refused}`, model: out.jevAnswer.model, calibrate: false, created: '2026-12-01', questions, refuse_below_label_mass: floor };
    const answers = await page.evaluate(
      async ({ profile, request }) => {
        const jev = (window as any).jev;
        jev.calibration.save(profile);
        return (await jev.decisions.createOpenAI({ ...request, calibration: profile.id })).answers as { type: string; name: string | null }[];
      },
      { profile, request: REQUEST },
    );
    const types = want.map((a, i) => (refused && i === index ? 'refusal' : a.type));
    expect(answers.map((a) => a.type), `floor ${floor}`).toEqual(types);
    expect(answers.map((a) => a.name)).toEqual(want.map((a) => a.name));
  }
});
