import { expect, test, type Page } from './support/warm-context.ts';
import { MIRROR } from './support/env.ts';

/**
 * The prompt on the playground's answer cards (`include: ["prompt"]`): each card has a collapsed
 * "Prompt the model read" block whose text equals the facade's `prompt.text` for the same request,
 * with the label token ids; the code snippets keep the request as a caller writes it (no `include`).
 */
const MODELS = ['tiny-random-llama', 'TinyStories-656K'] as const;

async function open(page: Page, model: string) {
  await page.goto(`/?model=${model}&host=${encodeURIComponent(MIRROR)}&device=wasm`);
  await expect(page.getByTestId('engine-status')).toHaveAttribute('data-state', 'ready');
}

for (const model of MODELS) {
  test(`answer cards show the prompt the model read, equal to the facade's, on ${model}`, async ({ page }) => {
    await open(page, model);
    await page.getByRole('button', { name: 'Ticket routing' }).click();
    await page.getByRole('button', { name: 'Decide', exact: true }).click();
    const result = page.getByTestId('decision-result');
    await expect(result).toBeVisible();
    const sent = JSON.parse((await result.getByTestId('raw-request').locator('code').textContent())!) as { include: string[]; questions: Record<string, unknown> };
    expect(sent.include).toEqual(['answer_mass', 'prompt']);

    const { include: _include, ...request } = sent;
    const fromFacade = await page.evaluate(
      async (body) => (await window.jev.decisions.create({ ...body, include: ['prompt'] } as never)).answers,
      request,
    );
    const keys = Object.keys(sent.questions);
    expect(keys.length).toBeGreaterThanOrEqual(2);
    for (const key of keys) {
      const card = page.getByTestId('answer').and(page.locator(`[data-key="${key}"]`));
      const block = card.getByTestId('answer-prompt');
      await expect(block).toBeVisible();
      expect(await block.evaluate((d: HTMLDetailsElement) => d.open), `${key}: closed by default`).toBe(false);
      await expect(block.getByTestId('answer-prompt-text')).toBeHidden();
      await block.getByText('Prompt the model read').click();
      const text = block.getByTestId('answer-prompt-text');
      await expect(text).toBeVisible();
      const prompt = fromFacade[key]!.prompt!;
      expect(await text.textContent(), key).toBe(prompt.text);
      const rows = block.getByTestId('label-ids');
      await expect(rows).toHaveCount(Object.keys(prompt.label_token_ids).length);
      for (const [answer, paths] of Object.entries(prompt.label_token_ids)) {
        await expect(rows.and(page.locator(`[data-answer="${answer}"]`))).toContainText(`[${paths[0]!.join(', ')}]`);
      }
    }

    // The snippets show the request a caller would send: the playground's `include` is not in them.
    const snippets = page.locator('#decide-panel').getByTestId('snippets');
    await snippets.getByText('Use it from code').click();
    await expect(snippets.getByTestId('snippet-code')).toContainText('"questions"');
    await expect(snippets.getByTestId('snippet-code')).not.toContainText('include');
  });
}
