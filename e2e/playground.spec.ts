import { expect, test, type Locator, type Page } from '@playwright/test';
import { MIRROR } from './support/env.ts';

/**
 * The playground driven as a person would: through labels, roles and visible text. Every flow that
 * asks the engine runs on the real TinyStories-656K (shipped in vendor/models) and on the generated
 * tiny-random-llama, both served by the local mirror, on wasm; what the page checks and does by
 * itself (its field errors, its tabs) runs once, on the first.
 */
const MODELS = [{ id: 'TinyStories-656K' }, { id: 'tiny-random-llama' }] as const;

async function open(page: Page, model: string, hash = '') {
  await page.goto(`/?model=${model}&host=${encodeURIComponent(MIRROR)}&device=wasm${hash}`);
  await expect(page.getByTestId('engine-status')).toHaveAttribute('data-state', 'ready');
}

/** The probabilities shown in an answer card, as numbers from the text (percent) and the data (0–1). */
async function shownProbabilities(card: Locator): Promise<{ percents: number[]; values: number[] }> {
  const rows = card.getByTestId('probability');
  const percents = (await rows.getByTestId('probability-value').allTextContents()).map((t) => Number.parseFloat(t));
  const values = (await rows.evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-value')))));
  return { percents, values };
}

async function expectAnswersSumToOne(page: Page, keys: readonly string[]) {
  for (const key of keys) {
    const card = page.getByTestId('answer').and(page.locator(`[data-key="${key}"]`));
    await expect(card).toBeVisible();
    const { percents, values } = await shownProbabilities(card);
    expect(percents.length, `${key} shows a bar per option`).toBeGreaterThanOrEqual(2);
    expect(percents.every((p) => Number.isFinite(p) && p >= 0 && p <= 100), `${key}: ${percents.join(', ')}`).toBe(true);
    // Each shown number is rounded to 0.1 %, so their sum may be off by 0.05 % per bar.
    expect(Math.abs(percents.reduce((a, b) => a + b, 0) - 100), `${key}: ${percents.join(' + ')}`).toBeLessThanOrEqual(0.05 * percents.length + 0.01);
    expect(Math.abs(values.reduce((a, b) => a + b, 0) - 1)).toBeLessThan(0.02);
  }
}

function lastAssistant(page: Page): Locator {
  return page.getByTestId('message').and(page.locator('[data-role=assistant]')).last();
}

for (const model of MODELS) {
  test.describe(`playground on ${model.id}`, () => {
    test('loads with progress bars that reach their totals, and shows and deletes the cache', async ({ page }) => {
      await open(page, model.id);
      await expect(page.getByTestId('engine-status')).toContainText(`Ready: ${model.id}`);
      await expect(page.getByTestId('engine-status')).toContainText('on wasm');
      expect(await page.evaluate(() => typeof window.jev.decisions.create), 'window.jev stays the client').toBe('function');

      const total = page.getByTestId('progress-total');
      const max = Number(await total.getAttribute('max'));
      expect(max, 'the total counts the bytes of every file').toBeGreaterThan(1000);
      await expect(total).toHaveJSProperty('value', max);
      await expect(page.getByTestId('load-progress')).toHaveAttribute('data-complete', 'true');
      const [loaded, of] = (await page.getByTestId('progress-total-bytes').textContent())!.split(' of ');
      expect(of!.startsWith(loaded!), `"${loaded} of ${of}"`).toBe(true);

      await page.getByText('Files', { exact: true }).click();
      const files = page.getByTestId('file-progress');
      expect(await files.count()).toBeGreaterThanOrEqual(3);
      await expect(files.filter({ hasText: 'onnx/model' })).toHaveCount(1);
      for (const bar of await files.locator('progress').all()) {
        expect(await bar.evaluate((p: HTMLProgressElement) => p.value === p.max && p.max >= 1)).toBe(true);
      }

      const cache = page.getByTestId('cache-status');
      await expect(cache).toContainText('stored in this browser');
      expect(Number(await cache.getAttribute('data-files'))).toBeGreaterThanOrEqual(3);
      await cache.getByRole('button', { name: `Delete ${model.id} from the cache` }).click();
      await expect(cache.getByRole('status')).toContainText('Deleted');
      await expect(cache).toHaveAttribute('data-files', '0');
      await expect(cache).toContainText('Nothing of this model is stored');
    });

    test('runs a decision from a preset: bars per option, the score on its scale, usage and latency', async ({ page }) => {
      await open(page, model.id);
      await page.getByRole('button', { name: 'Ticket routing' }).click();
      await expect(page.getByLabel('State: the text to judge')).toHaveValue(/charged twice/);
      await page.getByRole('button', { name: 'Decide', exact: true }).click();
      const result = page.getByTestId('decision-result');
      await expect(result).toBeVisible();
      await expectAnswersSumToOne(page, ['team', 'priority']);
      const urgent = await shownProbabilities(page.getByTestId('answer').and(page.locator('[data-key=urgent]')));
      expect(Math.abs(urgent.values[0]! + urgent.values[1]! - 1)).toBeLessThan(1e-9);

      const scale = page.getByTestId('score-scale');
      const score = Number(await scale.getAttribute('data-score'));
      expect(score).toBeGreaterThanOrEqual(0);
      expect(score).toBeLessThanOrEqual(3);
      await expect(scale.getByRole('img')).toHaveAccessibleName(/Score \d\.\d\d on a scale from 0 \(low\) to 3 \(critical\)/);
      await expect(result.getByTestId('confidence').first()).toHaveText(/\d+\.\d%/);
      await expect(result.getByTestId('latency')).toHaveText(/\d+ ms|\d+\.\d\d s/);
      await expect(result.getByTestId('decision-stats')).toContainText('Input tokens');

      await result.getByText('Response JSON').click();
      await expect(result.getByTestId('raw-response')).toContainText('"answers"');
      await result.getByText('Request JSON').click();
      await expect(result.getByTestId('raw-request')).toContainText('"model": "jev"');

      const snippets = page.locator('#decide-panel').getByTestId('snippets');
      await snippets.getByText('Use it from code').click();
      const origin = new URL(page.url()).origin;
      await expect(snippets.getByTestId('snippet-code')).toContainText(`curl ${origin}/inference/jev/api/alpha/decisions`);
      await snippets.getByRole('button', { name: 'fetch' }).click();
      await expect(snippets.getByTestId('snippet-code')).toContainText(`fetch('${origin}/inference/jev/api/alpha/decisions'`);
      await expect(snippets.getByRole('button', { name: 'openai client' })).toHaveCount(0);
    });

    test('runs a decision built by hand with all three question types', async ({ page }) => {
      await open(page, model.id);
      const panel = page.locator('#decide-panel');
      while ((await panel.getByTestId('question').count()) > 0) {
        await panel.getByRole('button', { name: /^Remove question/ }).first().click();
      }
      await page.getByLabel('State: the text to judge').fill('The little dog lost his red ball in the park and cried.');

      await panel.getByRole('button', { name: 'Add a choice question' }).click();
      const choice = panel.getByTestId('question').last();
      await choice.getByLabel('Key', { exact: true }).fill('place');
      await choice.getByLabel('Instructions').fill('Where did it happen?');
      await choice.getByLabel('Option 1 key').fill('park');
      await choice.getByLabel('Option 1 meaning').fill('Outside, on the grass');
      await choice.getByLabel('Option 2 key').fill('home');
      await choice.getByRole('button', { name: '+ Add option' }).click();
      await expect(choice.getByLabel('Option 3 key')).toBeFocused();
      await page.keyboard.type('sea');
      await choice.getByRole('button', { name: '+ Add option' }).click();
      await choice.getByLabel('Option 4 key').fill('shop');
      await choice.getByRole('button', { name: 'Remove option 4 (shop)' }).click();
      await expect(choice.getByTestId('option-row')).toHaveCount(3);

      await panel.getByRole('button', { name: 'Add a score question' }).click();
      const score = panel.getByTestId('question').last();
      await score.getByLabel('Key', { exact: true }).fill('mood');
      await score.getByLabel('Instructions').fill('How happy is the dog?');
      await score.getByLabel('Grade 0 label').fill('happy');
      await score.getByLabel('Grade 1 label').fill('fine');
      await score.getByLabel('Grade 2 label').fill('sad');
      await score.getByRole('button', { name: '+ Add grade' }).click();
      await expect(score.getByLabel('Grade 3 label')).toBeFocused();
      await page.keyboard.type('very sad');
      // Reorder to very sad < sad < happy: happy down twice, very sad up twice, and "fine" removed.
      await score.getByRole('button', { name: 'Move grade 0 (happy) down' }).click();
      await score.getByRole('button', { name: 'Move grade 1 (happy) down' }).click();
      await score.getByRole('button', { name: 'Move grade 3 (very sad) up' }).click();
      await score.getByRole('button', { name: 'Remove grade 0 (fine)' }).click();
      await score.getByRole('button', { name: 'Move grade 1 (very sad) up' }).click();
      await expect(score.getByRole('textbox')).toHaveCount(5); // key, instructions, three grades
      const grades = await score.getByTestId('grade-row').getByRole('textbox').evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value));
      expect(grades).toEqual(['very sad', 'sad', 'happy']);

      await panel.getByRole('button', { name: 'Add a true/false question' }).click();
      const noul = panel.getByTestId('question').last();
      await noul.getByLabel('Key', { exact: true }).fill('sad');
      await noul.getByLabel('Instructions').fill('Is the dog sad?');
      await noul.getByLabel('True when…').fill('The dog cries or is unhappy');
      await noul.getByLabel('False when…').fill('The dog is calm or glad');

      await panel.getByRole('button', { name: 'Decide', exact: true }).click();
      await expect(page.getByTestId('decision-result')).toBeVisible();
      await expectAnswersSumToOne(page, ['place', 'mood', 'sad']);
      await expect(page.getByTestId('answer').and(page.locator('[data-key=place]')).getByTestId('probability')).toHaveCount(3);
      await expect(page.getByTestId('score-scale').getByRole('img')).toHaveAccessibleName(/from 0 \(very sad\) to 2 \(happy\)/);
    });

    test('streams a chat reply, stops it keeping the partial text, then goes on', async ({ page }) => {
      // The engine holds the reply after its prompt and 3 tokens (a gate in front of the forward
      // passes, jev.debug.hold), so it is still streaming when Stop is pressed, however fast the
      // machine: Stop cancels the held request.
      await open(page, model.id, '#chat');
      await page.evaluate(() => window.jev.debug!.hold(4));
      await page.getByLabel('Max tokens').fill('400');
      await page.getByLabel('Seed').fill('7');
      await page.getByLabel('Message', { exact: true }).fill('Once upon a time there was a little dog.');
      await page.getByRole('button', { name: 'Send' }).click();
      const reply = lastAssistant(page);
      await expect(reply).toHaveAttribute('data-state', 'streaming');
      await expect(reply.getByTestId('message-text')).not.toHaveText('');
      await page.getByRole('button', { name: 'Stop' }).click();
      await expect(reply).toHaveAttribute('data-state', 'stopped');
      await expect(page.getByTestId('chat-status')).toHaveText('Stopped. The text so far is kept.');
      await page.evaluate(() => window.jev.debug!.release());
      const partial = await reply.getByTestId('message-text').textContent();
      expect(partial!.length).toBeGreaterThan(0);
      await page.waitForTimeout(500);
      await expect(reply.getByTestId('message-text')).toHaveText(partial!);
      await expect(reply.getByTestId('reply-stats')).toContainText('stopped');
      const tokens = Number(await reply.getByTestId('reply-stats').getAttribute('data-tokens'));
      expect(tokens, 'the tokens written before the hold').toBeGreaterThan(0);
      expect(tokens, 'the stream stopped at the hold').toBeLessThanOrEqual(4);

      await page.getByLabel('Max tokens').fill('12');
      await page.getByLabel('Message', { exact: true }).fill('And then?');
      await page.keyboard.press('Enter');
      const next = lastAssistant(page);
      await expect(next).toHaveAttribute('data-state', 'done');
      await expect(page.getByTestId('message')).toHaveCount(4);
      await expect(page.getByTestId('message').nth(1).getByTestId('message-text')).toHaveText(partial!);
      await expect(next.getByTestId('reply-stats')).toContainText('first token');
      await expect(next.getByTestId('reply-stats')).toContainText(/tokens\/s|1 token/);
      await expect(page.getByRole('button', { name: 'Send' })).toBeVisible();
    });

    test('the conversation and the drafts survive a reload; the conversation can be cleared', async ({ page }) => {
      await open(page, model.id);
      await page.getByLabel('State: the text to judge').fill('A state I typed');
      await page.getByRole('tab', { name: 'Chat' }).click();
      await page.getByLabel('Max tokens').fill('6');
      await page.getByLabel('Message', { exact: true }).fill('Tell me about the moon.');
      await page.getByRole('button', { name: 'Send' }).click();
      await expect(lastAssistant(page)).toHaveAttribute('data-state', 'done');
      const texts = await page.getByTestId('message-text').allTextContents();
      expect(texts).toHaveLength(2);
      await page.getByLabel('Message', { exact: true }).fill('A draft I have not sent');

      await page.reload();
      await expect(page.getByRole('tab', { name: 'Chat' })).toHaveAttribute('aria-selected', 'true');
      await expect(page.getByTestId('message-text')).toHaveText(texts);
      await expect(page.getByLabel('Message', { exact: true })).toHaveValue('A draft I have not sent');
      await expect(page.getByLabel('Max tokens')).toHaveValue('6');
      await expect(page.getByLabel('State: the text to judge')).toHaveValue('A state I typed');

      await page.getByRole('button', { name: 'Clear conversation' }).click();
      await expect(page.getByTestId('message')).toHaveCount(0);
      await page.reload();
      await expect(page.getByTestId('chat-log')).toContainText('No messages yet');
      await expect(page.getByTestId('message')).toHaveCount(0);
    });

  });
}

// What the page checks and does by itself, whatever model it holds: once, on the first model.
test.describe(`playground on ${MODELS[0].id}, whatever the model`, () => {
  const model = MODELS[0];
  test('an invalid input shows its error beside the field and keeps what was typed', async ({ page }) => {
    await open(page, model.id, '#chat');
    await page.getByLabel('Temperature').fill('5');
    await page.getByLabel('Message', { exact: true }).fill('Hello there, keep me');
    await page.getByRole('button', { name: 'Send' }).click();
    const error = page.locator('#chat-temperature-error');
    await expect(error).toContainText('temperature');
    await expect(error).toContainText('at most 2');
    await expect(page.getByLabel('Temperature')).toHaveAttribute('aria-invalid', 'true');
    await expect(page.getByLabel('Temperature')).toHaveValue('5');
    await expect(page.getByLabel('Message', { exact: true })).toHaveValue('Hello there, keep me');
    await expect(page.getByTestId('message')).toHaveCount(0);

    await page.getByRole('tab', { name: 'Decisions' }).click();
    const panel = page.locator('#decide-panel');
    await page.getByRole('button', { name: 'Intent detection' }).click();
    const state = await page.getByLabel('State: the text to judge').inputValue();
    const intent = panel.getByTestId('question').and(panel.locator('[data-key=intent]'));
    for (const key of ['ask', 'cancel', 'book']) await intent.getByRole('button', { name: new RegExp(`^Remove option \\d+ \\(${key}\\)$`) }).click();
    await expect(intent.getByTestId('option-row')).toHaveCount(1);
    await panel.getByRole('button', { name: 'Decide', exact: true }).click();
    const criteriaError = intent.getByTestId('field-error');
    await expect(criteriaError).toContainText('questions.intent.criteria');
    await expect(criteriaError).toContainText('at least 2 options');
    await expect(page.getByLabel('State: the text to judge')).toHaveValue(state);
    await expect(intent.getByLabel('Option 1 key')).toHaveValue('reschedule');

    // A fault the page can see itself is shown without asking the engine: two questions, one key.
    await intent.getByLabel('Key', { exact: true }).fill('names_time');
    await panel.getByRole('button', { name: 'Decide', exact: true }).click();
    await expect(panel.getByTestId('field-error')).toHaveText('Another question already uses the key "names_time"; keys must differ.');
  });

  test('tabs follow the keyboard', async ({ page }) => {
    await open(page, model.id);
    await page.getByRole('tab', { name: 'Decisions' }).focus();
    await page.keyboard.press('ArrowRight');
    await expect(page.getByRole('tab', { name: 'Chat' })).toBeFocused();
    await expect(page.getByRole('tab', { name: 'Chat' })).toHaveAttribute('aria-selected', 'true');
    await expect(page.getByRole('tabpanel', { name: 'Chat' })).toBeVisible();
    await expect(page.getByRole('tabpanel', { name: 'Decisions' })).toBeHidden();
  });
});
