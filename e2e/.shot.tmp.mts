import { chromium } from '@playwright/test';
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--enable-unsafe-webgpu'] });
const scheme = (process.env.SCHEME ?? 'light') as 'light' | 'dark';
const width = Number(process.env.W ?? 1280);
const page = await browser.newPage({ viewport: { width, height: 800 }, colorScheme: scheme });
page.on('console', (m) => console.log('console:', m.type(), m.text()));
page.on('pageerror', (e) => console.log('pageerror:', e.message));
await page.goto(`http://127.0.0.1:4490/?model=${process.env.MODEL ?? 'TinyStories-656K'}&host=http://127.0.0.1:4491&device=wasm`);
await page.waitForSelector('[data-testid=engine-status][data-state=ready]', { timeout: 60000 });
if (process.env.DECIDE) {
  await page.getByRole('button', { name: 'Decide' }).click();
  await page.waitForSelector('[data-testid=decision-result]', { timeout: 60000 });
}
if (process.env.TAB) await page.getByRole('tab', { name: process.env.TAB }).click();
await page.screenshot({ path: `/tmp/pg/shot-${width}-${scheme}.png`, fullPage: true });
await browser.close();
