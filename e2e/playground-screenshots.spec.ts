import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { MIRROR, REPO } from './support/env.ts';

/**
 * Writes the screenshots in docs/screenshots (desktop 1280×800 and phone 375×812, light and
 * dark, the decision and the chat tab). Not a test: playwright.config.ts runs it only with
 * UPDATE_SCREENSHOTS=1:
 *
 *     npx vite build && UPDATE_SCREENSHOTS=1 npx playwright test e2e/playground-screenshots.spec.ts
 */
const OUT = resolve(REPO, 'docs/screenshots');
const MODEL = 'TinyStories-656K';
const SIZES = [
  { name: 'desktop', viewport: { width: 1280, height: 800 } },
  { name: 'phone', viewport: { width: 375, height: 812 } },
] as const;
const SCHEMES = ['light', 'dark'] as const;


async function shoot(page: Page, file: string) {
  // Carets blink and spinners turn: freeze them so the pictures are stable.
  await page.addStyleTag({ content: '*, *::before, *::after { animation: none !important; transition: none !important; caret-color: transparent !important; }' });
  await page.screenshot({ path: resolve(OUT, file), fullPage: true });
}

for (const size of SIZES) {
  for (const scheme of SCHEMES) {
    test.describe(`${size.name} ${scheme}`, () => {
      test.use({ viewport: size.viewport, colorScheme: scheme });

      test(`screenshots of the playground, ${size.name}, ${scheme}`, async ({ page }) => {
        mkdirSync(OUT, { recursive: true });
        await page.goto(`/?model=${MODEL}&host=${encodeURIComponent(MIRROR)}&device=wasm`);
        await expect(page.getByTestId('engine-status')).toHaveAttribute('data-state', 'ready');

        await page.getByRole('button', { name: 'Ticket routing' }).click();
        await page.getByRole('button', { name: 'Decide', exact: true }).click();
        await expect(page.getByTestId('decision-result')).toBeVisible();
        await shoot(page, `${size.name}-${scheme}-decisions.png`);

        await page.getByRole('tab', { name: 'Chat' }).click();
        if (size.name === 'phone') await page.getByText('Settings', { exact: true }).click();
        await page.getByLabel('Max tokens').fill('48');
        await page.getByLabel('Seed').fill('3');
        await page.getByLabel('Message', { exact: true }).fill('Tell me a short story about a brave little dog.');
        await page.getByRole('button', { name: 'Send' }).click();
        await expect(page.getByTestId('message').last()).toHaveAttribute('data-state', 'done');
        await page.getByLabel('Message', { exact: true }).fill('What happened next?');
        if (size.name === 'phone') await page.getByText('Settings', { exact: true }).click();
        const snippets = page.locator('#chat-panel').getByTestId('snippets');
        await snippets.getByText('Use it from code').click();
        await snippets.getByRole('button', { name: 'openai client' }).click();
        await shoot(page, `${size.name}-${scheme}-chat.png`);
      });
    });
  }
}
