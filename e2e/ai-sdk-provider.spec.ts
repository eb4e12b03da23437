/**
 * The AI SDK provider of the built package (`jev-local/ai-sdk`, dist/lib/ai-sdk.js) in Chromium,
 * over the page's own client (`createClient()`, `window.jev`): the AI SDK's unmodified functions
 * (`experimental_decide` with its own result validation, `generateText`, `streamText`,
 * `generateObject`, `streamObject`, a tool loop) run against the engine in the page, with no HTTP
 * request at all (no request to the service worker's paths is seen while they run), and give the
 * numbers and replies the client's own methods give for the same requests.
 */
import { expect, test, type Page } from './support/warm-context.ts';
import { aiSdkBundle } from './support/ai-sdk-bundle.ts';
import { MIRROR } from './support/env.ts';

const MODEL = 'tiny-random-llama3';
/** The provider as an app imports it: the package's built file, served beside the page. */
const PROVIDER_URL = '/lib/ai-sdk.js';
const STATE = 'I was charged twice for my order and I want the duplicate refunded today.';
const QUESTIONS = {
  refund: { type: 'boolean', instructions: 'Is the customer asking for money back?' },
  team: { type: 'choice', instructions: 'Which team should handle it?', criteria: { billing: 'Charges and refunds', shipping: 'Deliveries', support: null } },
  anger: { type: 'score', instructions: 'How angry is the customer?', criteria: ['calm', 'annoyed', 'angry', 'furious'] },
};
const JEV_QUESTIONS = { ...QUESTIONS, refund: { type: 'noul', instructions: QUESTIONS.refund.instructions } };

/** The playground on the model, with the AI SDK's functions loaded; returns the HTTP requests to the API paths seen from then on. */
async function open(page: Page): Promise<string[]> {
  await page.goto(`/?model=${MODEL}&host=${encodeURIComponent(MIRROR)}&device=wasm&dtype=fp32`);
  expect(await page.evaluate(() => (window as any).jev.ready)).toMatchObject({ state: 'ready', model: MODEL });
  await page.addScriptTag({ path: await aiSdkBundle() });
  const apiRequests: string[] = [];
  page.on('request', (r) => {
    const path = new URL(r.url()).pathname;
    if (/^\/(v1|inference)\//.test(path)) apiRequests.push(path);
  });
  return apiRequests;
}

test.describe('jev-local/ai-sdk in the page', () => {
  test('experimental_decide: the AI SDK validation passes, the numbers are the client\'s, refusal below the floor', async ({ page }) => {
    const apiRequests = await open(page);
    const out = await page.evaluate(
      async ({ url, state, questions, jevQuestions }) => {
        const { experimental_decide, Experimental_DecisionRefusalError } = (globalThis as any).aiSdk;
        const jev = (window as any).jev;
        const { jevLocal } = await import(/* @vite-ignore */ url);
        const result = await experimental_decide({ model: jevLocal(jev).decisionModel('jev'), state, questions, maxRetries: 0 });
        const direct = await jev.decisions.create({ model: 'jev', state, questions: jevQuestions, include: ['answer_mass'] });
        const mass = (k: string) => direct.answers[k].answer_mass as number;
        const [low, next] = Object.keys(questions).sort((a, b) => mass(a) - mass(b));
        const floor = (mass(low!) + mass(next!)) / 2;
        const refused = await experimental_decide({ model: jevLocal(jev, { refuseBelowLabelMass: floor }).decisionModel('jev'), state, questions, maxRetries: 0 }).then(
          () => null,
          (e: any) => ({ isRefusal: Experimental_DecisionRefusalError.isInstance(e), questionIds: e.questionIds }),
        );
        const atFloor = await jevLocal(jev, { refuseBelowLabelMass: mass(low!) }).decisionModel('jev').doDecide({ state: [{ type: 'text', text: state }], questions });
        return { answers: result.answers, usage: result.usage, direct, low, next, refused, atFloor: atFloor.answers };
      },
      { url: PROVIDER_URL, state: STATE, questions: QUESTIONS, jevQuestions: JEV_QUESTIONS },
    );
    const { answers, direct } = out as { answers: Record<string, any>; direct: any };
    expect(answers['refund']).toEqual({ type: 'boolean', probability: direct.answers.refund.noul });
    expect(answers['team']).toEqual({ type: 'choice', choice: direct.answers.team.choice, probabilities: direct.answers.team.probabilities });
    expect(answers['anger']).toEqual({ type: 'score', score: direct.answers.anger.score, probabilities: direct.answers.anger.probabilities });
    const sum = (p: Record<string, number>) => Object.values(p).reduce((a, b) => a + b, 0);
    expect(Math.abs(sum(answers['team'].probabilities) - 1)).toBeLessThan(1e-9);
    expect(answers['anger'].score).toBeCloseTo(Object.entries(answers['anger'].probabilities as Record<string, number>).reduce((s, [i, p]) => s + Number(i) * p, 0), 12);
    expect(out.usage.inputTokens).toBe(direct.usage.input_tokens);
    // Refused below the floor, only that question; answered at the floor exactly.
    expect(direct.answers[out.low!].answer_mass).toBeLessThan(direct.answers[out.next!].answer_mass);
    expect(out.refused).toEqual({ isRefusal: true, questionIds: [out.low] });
    expect(out.atFloor[out.low!]).toEqual(answers[out.low!]);
    // Straight to the engine: not one request to the HTTP surface.
    expect(apiRequests).toEqual([]);
  });

  test('generateText, streamText, generateObject, streamObject and a tool loop against the engine in the page; abort', async ({ page }) => {
    const apiRequests = await open(page);
    const out = await page.evaluate(async (url) => {
      const { generateObject, generateText, stepCountIs, streamObject, streamText, tool, z } = (globalThis as any).aiSdk;
      const jev = (window as any).jev;
      const { jevLocal } = await import(/* @vite-ignore */ url);
      const provider = jevLocal(jev);
      const prompt = 'Describe a user.';

      const whole = await generateText({ model: provider('jev'), prompt, temperature: 0, maxOutputTokens: 16, maxRetries: 0 });
      const direct = await jev.chat.completions.create({ model: 'jev', messages: [{ role: 'user', content: prompt }], temperature: 0, max_tokens: 16 });
      const streamed = streamText({ model: provider('jev'), prompt, temperature: 0, maxOutputTokens: 16, maxRetries: 0 });
      const deltas: string[] = [];
      for await (const d of streamed.textStream) deltas.push(d);

      const Ticket = z.object({ title: z.string().min(1).max(10), priority: z.enum(['low', 'medium', 'high']), estimate: z.int().min(1).max(13), done: z.boolean() });
      const objectSettings = { model: provider('jev'), prompt, schema: Ticket, schemaName: 'ticket', temperature: 0, seed: 7, maxOutputTokens: 120, maxRetries: 0 };
      const object = await generateObject(objectSettings);
      const objectStream = streamObject(objectSettings);
      const partials: unknown[] = [];
      for await (const p of objectStream.partialObjectStream) partials.push(p);

      const Weather = z.object({ city: z.enum(['Paris', 'Tokyo', 'Lima']), days: z.int().min(1).max(7) });
      const ran: unknown[] = [];
      const loop = await generateText({
        model: provider('jev'),
        prompt: 'What is the weather in Paris?',
        tools: { get_weather: tool({ description: 'The forecast for a city.', inputSchema: Weather, execute: async (input: unknown) => (ran.push(input), { forecast: 'sunny' }) }) },
        prepareStep: ({ stepNumber }: { stepNumber: number }) => ({ toolChoice: stepNumber === 0 ? 'required' : 'none' }),
        providerOptions: { jev: { parallelToolCalls: false } },
        stopWhen: stepCountIs(3),
        temperature: 0,
        maxOutputTokens: 60,
        maxRetries: 0,
      });

      // Abort: held after two forward passes, so the call is still running when it is aborted.
      await jev.debug.hold(2);
      const controller = new AbortController();
      const pending = generateText({ model: provider('jev'), prompt, maxOutputTokens: 200, abortSignal: controller.signal, maxRetries: 0 }).then(
        () => 'resolved',
        (e: Error) => e.name,
      );
      await new Promise((r) => setTimeout(r, 300));
      controller.abort();
      const aborted = await pending;
      await jev.debug.release();

      return {
        text: whole.text,
        finish: whole.finishReason,
        directText: direct.choices[0].message.content,
        directFinish: direct.choices[0].finish_reason,
        usage: whole.usage,
        directUsage: direct.usage,
        deltas,
        object: object.object,
        objectFinish: object.finishReason,
        objectValid: Ticket.safeParse(object.object).success,
        streamedObject: await objectStream.object,
        partials: partials.length,
        steps: loop.steps.map((s: any) => ({ finish: s.finishReason, calls: s.toolCalls.map((c: any) => ({ name: c.toolName, input: c.input, valid: Weather.safeParse(c.input).success })), results: s.toolResults.map((r: any) => r.output) })),
        ran,
        aborted,
      };
    }, PROVIDER_URL);

    expect(out.text).toBe(out.directText);
    expect(out.text.length).toBeGreaterThan(0);
    expect(out.finish).toBe(out.directFinish === 'length' ? 'length' : 'stop');
    expect(out.usage.inputTokens).toBe(out.directUsage.prompt_tokens);
    expect(out.usage.outputTokens).toBe(out.directUsage.completion_tokens);
    expect(out.deltas.length).toBeGreaterThan(1);
    expect(out.deltas.join('')).toBe(out.text);

    expect(out.objectFinish).toBe('stop');
    expect(out.objectValid).toBe(true);
    expect(out.streamedObject).toEqual(out.object);
    expect(out.partials).toBeGreaterThan(2);

    expect(out.steps.length).toBe(2);
    expect(out.steps[0]!.finish).toBe('tool-calls');
    expect(out.steps[0]!.calls.length).toBe(1);
    expect(out.steps[0]!.calls[0]).toMatchObject({ name: 'get_weather', valid: true });
    expect(out.ran).toEqual([out.steps[0]!.calls[0]!.input]);
    expect(out.steps[0]!.results).toEqual([{ forecast: 'sunny' }]);
    expect(out.steps[1]!.calls).toEqual([]);

    expect(out.aborted).toBe('AbortError');
    expect(apiRequests).toEqual([]);
  });
});
