/**
 * The Decisions tab's snippets, executed: the code the page shows for `openai.decisions.create`
 * (the unmodified `openai` client through the service worker) and for `experimental_decide` over
 * `jev-local/ai-sdk` (the built provider, calling the engine in the page) is run as it is shown
 * (only its `import` lines bound to the bundled packages), and its answers equal the Jev
 * endpoint's for the same request, to the last bit. On the real TinyStories-656K, wasm.
 */
import { expect, test, type Page } from './support/warm-context.ts';
import { CLIENT_BUNDLE } from './support/client-bundle.ts';
import { MIRROR } from './support/env.ts';

const MODEL = 'TinyStories-656K';
const PROVIDER_URL = '/lib/ai-sdk.js';

/** The snippet's code as the page shows it, after choosing its button. */
async function snippetCode(page: Page, label: string): Promise<string> {
  const snippets = page.locator('#decide-panel').getByTestId('snippets');
  await snippets.getByRole('button', { name: label, exact: true }).click();
  return (await snippets.getByTestId('snippet-code').textContent())!;
}

/** Runs shown code in the page: its imports bound to what the page has, `console.log` captured. */
async function runSnippet(page: Page, code: string, imports: Record<string, string>): Promise<unknown[][]> {
  let body = code;
  for (const [line, binding] of Object.entries(imports)) {
    expect(body, `the snippet imports ${line}`).toContain(line);
    body = body.replace(line, binding);
  }
  expect(body).not.toMatch(/^import /m);
  return (await page.evaluate(`(async () => { const logged = []; const console = { log: (...a) => logged.push(a) }; await window.jev.cache.clear();\n${body}\nreturn logged; })()`)) as unknown[][];
}

test('the decision snippets in OpenAI\'s shape and through the AI SDK provider run as shown and answer as the Jev endpoint does', async ({ page }) => {
  await page.goto(`/?model=${MODEL}&host=${encodeURIComponent(MIRROR)}&device=wasm`);
  await expect(page.getByTestId('engine-status')).toHaveAttribute('data-state', 'ready');
  await page.waitForFunction(() => !!navigator.serviceWorker.controller);
  await page.addScriptTag({ path: CLIENT_BUNDLE });
  await page.getByRole('button', { name: 'Ticket routing' }).click();
  const snippets = page.locator('#decide-panel').getByTestId('snippets');
  await snippets.getByText('Use it from code').click();

  // The Jev request on screen, from the fetch form's body.
  const fetchCode = await snippetCode(page, 'fetch');
  const jev = JSON.parse(fetchCode.slice(fetchCode.indexOf('JSON.stringify(') + 'JSON.stringify('.length, fetchCode.indexOf('),\n});'))) as {
    state: string;
    questions: Record<string, { type: string; instructions: string; criteria: unknown }>;
  };
  expect(Object.keys(jev.questions)).toEqual(['team', 'urgent', 'priority']);
  // What a predicate carries: the yes/no question without its true/false descriptions.
  const jevPredicates = { ...jev, questions: { ...jev.questions, urgent: { type: 'noul', instructions: jev.questions['urgent']!.instructions } } };
  const direct = (await page.evaluate(
    async ([asShown, asPredicate]) => {
      const client = (window as any).jev;
      await client.cache.clear();
      const shown = await client.decisions.create(asShown);
      await client.cache.clear();
      return { shown, predicate: await client.decisions.create(asPredicate) };
    },
    [jev, jevPredicates] as const,
  )) as { shown: any; predicate: any };

  // openai.decisions.create, through the service worker at this origin.
  const openaiCode = await snippetCode(page, 'openai.decisions.create');
  const origin = new URL(page.url()).origin;
  expect(openaiCode).toContain(`baseURL: '${origin}/v1'`);
  expect(openaiCode).toContain('those of "urgent" are not sent');
  const [[answers]] = (await runSnippet(page, openaiCode, { "import OpenAI from 'openai';": 'const { OpenAI } = globalThis;' })) as [[any[]]];
  expect(answers.map((a) => [a.type, a.name])).toEqual([
    ['choice', 'team'],
    ['predicate', 'urgent'],
    ['score', 'priority'],
  ]);
  const want = direct.predicate.answers;
  expect(answers[0].choice).toBe(want.team.choice);
  expect(answers[0].probabilities).toEqual(Object.keys(jev.questions['team']!.criteria as object).map((value) => ({ value, probability: want.team.probabilities[value] })));
  expect(answers[1].probability).toBe(want.urgent.noul);
  expect(answers[2].score).toBe(want.priority.score);
  expect(answers[2].probabilities.map((p: any) => p.probability)).toEqual([0, 1, 2, 3].map((i) => want.priority.probabilities[String(i)]));

  // experimental_decide over jevLocal(window.jev): the engine in the page, the request as shown (descriptions kept).
  const aiCode = await snippetCode(page, 'AI SDK');
  const apiRequests: string[] = [];
  page.on('request', (r) => {
    if (/\/(v1|inference)\//.test(new URL(r.url()).pathname)) apiRequests.push(r.url());
  });
  const [[decided, usage]] = (await runSnippet(page, aiCode, {
    "import { experimental_decide } from 'ai';": 'const { experimental_decide } = globalThis;',
    "import { jevLocal } from 'jev-local/ai-sdk';": `const { jevLocal } = await import('${PROVIDER_URL}');`,
  })) as [[Record<string, any>, any]];
  const shown = direct.shown.answers;
  expect(decided['urgent']).toEqual({ type: 'boolean', probability: shown.urgent.noul });
  expect(decided['team']).toEqual({ type: 'choice', choice: shown.team.choice, probabilities: shown.team.probabilities });
  expect(decided['priority']).toEqual({ type: 'score', score: shown.priority.score, probabilities: shown.priority.probabilities });
  expect(usage.inputTokens).toBe(direct.shown.usage.input_tokens);
  expect(apiRequests, 'the provider calls the engine in the page, not the HTTP surface').toEqual([]);
  // The descriptions change what the model reads: the two Jev answers differ, so the comparisons above tell them apart.
  expect(shown.urgent.noul).not.toBe(want.urgent.noul);
});
