import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from './support/warm-context.ts';
import { startModelHost, type ModelHost } from './support/model-host.ts';
import { EXTRA_PORT, GENERATED } from './support/env.ts';

/**
 * The playground's chat with a thinking model, in Chromium on wasm: the generated Qwen3 (random
 * weights, Qwen3's real tokenizer), served with its template's generation prompt opening the think
 * block (as Qwen3's thinking-2507 templates do), so that the reply is reasoning whatever the random
 * weights write. The reasoning shows in a collapsed "Reasoning" block above the answer; the
 * "Thinking" setting sends reasoning_effort, and "Off" (enable_thinking false) gives no reasoning.
 */
const SOURCE = join(GENERATED, 'tiny-random-qwen3');
const MODEL = 'tiny-random-qwen3-thinking';
const present = existsSync(join(SOURCE, 'onnx', 'model.onnx'));

let root = '';
let mirror: ModelHost | null = null;

test.beforeAll(async () => {
  if (!present) return;
  root = mkdtempSync(join(tmpdir(), 'jev-reasoning-'));
  const dir = join(root, MODEL);
  mkdirSync(dir);
  for (const f of readdirSync(SOURCE)) if (f !== 'tokenizer_config.json') symlinkSync(join(SOURCE, f), join(dir, f));
  const config = JSON.parse(readFileSync(join(SOURCE, 'tokenizer_config.json'), 'utf8')) as { chat_template: string };
  const generation = "{{- '<|im_start|>assistant\\n' }}";
  expect(config.chat_template).toContain(generation);
  config.chat_template = config.chat_template.replace(generation, "{{- '<|im_start|>assistant\\n<think>\\n' }}");
  writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify(config));
  mirror = await startModelHost([root], EXTRA_PORT.reasoningMirror);
});

test.afterAll(async () => {
  await mirror?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

test.skip(!present, `${SOURCE} is missing: run \`npm run models\``);

test('a thinking reply shows its reasoning collapsed above the answer; thinking off shows none', async ({ page }) => {
  await page.goto(`/?model=${MODEL}&host=${encodeURIComponent(mirror!.url)}&device=wasm#chat`);
  await expect(page.getByTestId('engine-status')).toHaveAttribute('data-state', 'ready');
  await page.getByLabel('Temperature').fill('0');
  await page.getByLabel('Max tokens').fill('8');
  await page.getByLabel('Message', { exact: true }).fill('Why is the sky blue?');
  await page.getByRole('button', { name: 'Send' }).click();

  const reply = page.getByTestId('message').and(page.locator('[data-role=assistant]')).last();
  await expect(reply).toHaveAttribute('data-state', 'done');
  const reasoning = reply.getByTestId('reasoning');
  await expect(reasoning).toBeVisible();
  await expect(reasoning.locator('summary')).toHaveText('Reasoning');
  // Collapsed: the reasoning text is there but not shown until opened.
  await expect(reasoning).not.toHaveAttribute('open', '');
  await expect(reasoning.getByTestId('reasoning-text')).toBeHidden();
  await reasoning.locator('summary').click();
  await expect(reasoning.getByTestId('reasoning-text')).toBeVisible();
  const thought = (await reasoning.getByTestId('reasoning-text').textContent()) ?? '';
  expect(thought.length).toBeGreaterThan(0);
  expect(thought).not.toContain('<think>');
  // The same request through the client: the reasoning is reasoning_content, the answer content.
  const direct = await page.evaluate(
    async () =>
      (await window.jev.chat.completions.create({ model: 'jev', messages: [{ role: 'system', content: 'You are a helpful, concise assistant.' }, { role: 'user', content: 'Why is the sky blue?' }], temperature: 0, max_tokens: 8, top_p: 0.95 })) as {
        choices: { message: { content: string; reasoning_content?: string }; finish_reason: string }[];
      },
  );
  expect(direct.choices[0]!.message.reasoning_content).toBe(thought);
  await expect(reply.getByTestId('message-text')).toHaveText(direct.choices[0]!.message.content);
  if (direct.choices[0]!.message.content === '') {
    expect(direct.choices[0]!.finish_reason).toBe('length');
    await expect(reply.getByTestId('reply-stats')).toContainText('cut at max tokens');
  }

  // The same over HTTP (the service worker on the page origin), streamed: the reasoning arrives as
  // delta.reasoning_content, and the pieces add up to the non-streamed message.
  await page.waitForFunction(() => !!navigator.serviceWorker.controller);
  const sse = await page.evaluate(async () => {
    const res = await fetch('/v1/chat/completions', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'jev', messages: [{ role: 'system', content: 'You are a helpful, concise assistant.' }, { role: 'user', content: 'Why is the sky blue?' }], temperature: 0, max_tokens: 8, top_p: 0.95, stream: true }),
    });
    const text = await res.text();
    const chunks = text.split('\n').filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]').map((l) => JSON.parse(l.slice(6)));
    return {
      reasoning: chunks.map((c) => c.choices[0]?.delta.reasoning_content ?? '').join(''),
      content: chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''),
      done: text.trimEnd().endsWith('data: [DONE]'),
    };
  });
  expect(sse).toEqual({ reasoning: thought, content: direct.choices[0]!.message.content, done: true });

  // Thinking off: the template writes an empty think block into the prompt; the reply has no reasoning.
  await page.getByLabel('Thinking', { exact: true }).selectOption('none');
  await page.getByLabel('Message', { exact: true }).fill('And at night?');
  await page.getByRole('button', { name: 'Send' }).click();
  const second = page.getByTestId('message').and(page.locator('[data-role=assistant]')).last();
  await expect(second).toHaveAttribute('data-state', 'done');
  await expect(second.getByTestId('reasoning')).toHaveCount(0);
});
