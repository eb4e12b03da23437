import { chromium } from '@playwright/test';
import { readFileSync } from 'node:fs';
const [file, w, h, out] = [process.argv[2]!, Number(process.argv[3]), Number(process.argv[4]), process.argv[5]!];
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
const page = await browser.newPage({ viewport: { width: w, height: h } });
await page.setContent(`<body style="margin:0"><img id=i src="data:image/png;base64,${readFileSync(file).toString('base64')}"></body>`);
const height = await page.evaluate(() => (document.getElementById('i') as HTMLImageElement).naturalHeight);
for (let y = 0, n = 0; y < height; y += h, n++) {
  await page.screenshot({ path: `${out}-${n}.png`, clip: { x: 0, y, width: w, height: Math.min(h, height - y) }, fullPage: true });
}
console.log(height);
await browser.close();
