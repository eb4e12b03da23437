import { chromium } from '@playwright/test';
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--enable-unsafe-webgpu'] });
const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
page.on('pageerror', (e) => console.log('pageerror:', e.message));
await page.goto(`http://127.0.0.1:4490/?model=${process.env.MODEL ?? 'TinyStories-656K'}&host=http://127.0.0.1:4491&device=wasm#chat`);
await page.waitForSelector('[data-testid=engine-status][data-state=ready]', { timeout: 60000 });
for (const max of ['400', '']) {
  await page.getByLabel('Max tokens').fill(max);
  await page.getByLabel('Message').fill('Once upon a time');
  const t0 = Date.now();
  await page.getByRole('button', { name: 'Send' }).click();
  await page.waitForSelector('#chat-panel button.primary:has-text("Send")', { timeout: 60000 });
  console.log('max', max, 'took', Date.now() - t0, 'ms', await page.locator('[data-testid=reply-stats]').last().textContent());
  console.log((await page.locator('[data-testid=message-text]').last().textContent())?.slice(0, 200));
}
await page.screenshot({ path: `/tmp/pg/chat.png`, fullPage: true });
await browser.close();
