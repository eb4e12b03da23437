/**
 * The Extract tab driven as a person would, on the real TinyStories-656K (wasm): a field set built
 * by hand (text, number with decimals, date), sent; every highlighted span is the state's slice at
 * its answer's source (and a text value is that slice), the bars carry each answer's pNull and
 * confidence; the fetch and client.extractions snippets, run as shown, answer as the tab did; the
 * draft survives a reload; a bad reference date is named beside its field before any call; then
 * a labelled set is evaluated in the page and its metrics are recomputed here from the answers.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect, test, type Page } from './support/warm-context.ts';
import { MIRROR, REPO } from './support/env.ts';
import { aiSdkBundle } from './support/ai-sdk-bundle.ts';
import { parseExtractionSet } from '../src/evaluation/extraction-dataset.ts';

const MODEL = 'TinyStories-656K';
const STATE = 'Invoice INV-2041 from Lindqvist Paper. Total due: 177.50 EUR by 2026-04-01.';

async function open(page: Page) {
  await page.goto(`/?model=${MODEL}&host=${encodeURIComponent(MIRROR)}&device=wasm#extract`);
  await expect(page.getByTestId('engine-status')).toHaveAttribute('data-state', 'ready');
  await page.getByRole('tab', { name: 'Extract' }).click();
}

/** Runs shown code in the page with console.log captured. */
async function runSnippet(page: Page, code: string): Promise<unknown[][]> {
  expect(code).not.toMatch(/^import /m);
  return (await page.evaluate(`(async () => { const logged = []; const console = { log: (...a) => logged.push(a) };\n${code}\nreturn logged; })()`)) as unknown[][];
}

test('the Extract tab: a field set built by hand, values marked at their sources, pNull and confidence bars, snippets that run', async ({ page }) => {
  await open(page);
  const panel = page.locator('#extract-panel');
  while ((await panel.getByTestId('extract-field').count()) > 0) await panel.getByRole('button', { name: /^Remove field/ }).first().click();
  await panel.getByLabel('State: the text to read').fill(STATE);
  await panel.getByLabel(/^Reference date/).fill('2026-13-01');

  const add = async (key: string, type: string, instructions: string) => {
    const index = await panel.getByTestId('extract-field').count();
    await panel.getByRole('button', { name: '+ Add a field' }).click();
    // By position: a locator that stays on this field when more are added.
    const field = panel.getByTestId('extract-field').nth(index);
    await field.getByLabel('Key', { exact: true }).fill(key);
    await field.getByLabel('Type').selectOption(type);
    await field.getByLabel('Instructions').fill(instructions);
    return field;
  };
  await add('invoice', 'text', 'The invoice number');
  const total = await add('total', 'number', 'The total amount due');
  await total.getByLabel('Unit').fill('EUR');
  await total.getByLabel('Decimals').fill('9');
  await add('due', 'date', 'When payment is due');

  // Refused in the page, each beside its field, before any call.
  await panel.getByRole('button', { name: 'Extract', exact: true }).click();
  await expect(total.getByTestId('field-error')).toContainText('Decimals must be a whole number from 0 to 6');
  await expect(panel.locator('#extract-reference-date-error')).toContainText('real calendar date');
  await expect(panel.getByTestId('extract-result')).toHaveCount(0);
  await total.getByLabel('Decimals').fill('2');
  await panel.getByLabel(/^Reference date/).fill('2026-03-02');

  await panel.getByRole('button', { name: 'Extract', exact: true }).click();
  const result = panel.getByTestId('extract-result');
  await expect(result).toBeVisible();
  await result.getByText('Response JSON').click();
  const response = JSON.parse((await result.getByTestId('extract-raw-response').locator('pre').textContent())!) as { answers: Record<string, any> };
  expect(Object.keys(response.answers)).toEqual(['invoice', 'total', 'due']);

  // Every highlighted piece belongs to a source; each field's pieces rebuild state.slice(start, end).
  const marks = await result.getByTestId('source-mark').evaluateAll((els) => els.map((e) => ({ keys: JSON.parse(e.getAttribute('data-keys')!) as string[], text: e.textContent! })));
  const highlighted = (await result.getByTestId('highlighted-state').textContent())!;
  expect(highlighted).toBe(STATE);
  let sourced = 0;
  for (const [key, a] of Object.entries(response.answers)) {
    const card = result.getByTestId('extract-answer').and(page.locator(`[data-key="${key}"]`));
    if (a.type === 'refusal') continue;
    // Bars: pNull and confidence, as the answer has them.
    const bars = card.getByTestId('probability');
    await expect(bars.and(page.locator('[data-key=pNull]'))).toHaveAttribute('data-value', String(a.pNull));
    await expect(bars.and(page.locator('[data-key=confidence]'))).toHaveAttribute('data-value', String(a.confidence));
    expect(a.pNull).toBeGreaterThanOrEqual(0);
    expect(a.pNull).toBeLessThanOrEqual(1);
    if (a.source) {
      sourced += 1;
      expect(a.source.part).toBe(0);
      const slice = STATE.slice(a.source.start, a.source.end);
      expect(marks.filter((m) => m.keys.includes(key)).map((m) => m.text).join(''), key).toBe(slice);
      if (a.type === 'text') expect(a.guess).toBe(slice);
    } else {
      expect(marks.some((m) => m.keys.includes(key)), `${key} has no source, so nothing is marked`).toBe(false);
    }
  }
  // A text value is copied from the state by construction: it always has its source.
  expect(response.answers['invoice'].type === 'refusal' || response.answers['invoice'].source !== undefined).toBe(true);
  expect(sourced).toBeGreaterThanOrEqual(1);

  // The snippets carry the request on screen; fetch (through the service worker) and the facade answer as the tab did.
  await page.waitForFunction(() => !!navigator.serviceWorker.controller);
  const snippets = panel.getByTestId('snippets');
  await snippets.getByText('Use it from code').click();
  const code = async (label: string) => {
    await snippets.getByRole('button', { name: label, exact: true }).click();
    return (await snippets.getByTestId('snippet-code').textContent())!;
  };
  const origin = new URL(page.url()).origin;
  const fetchCode = await code('fetch');
  expect(fetchCode).toContain(`fetch('${origin}/v1/extractions'`);
  const [[viaFetch]] = (await runSnippet(page, fetchCode)) as [[any]];
  const [[viaFacade]] = (await runSnippet(page, await code('client.extractions'))) as [[any]];
  expect(viaFetch.answers).toEqual(response.answers);
  expect(viaFacade).toEqual(response.answers);
  // experimental_extract over jevLocal(window.jev): the SDK's own validation (sources, types) passes, the answers are the tab's.
  const aiCode = await code('experimental_extract');
  expect(aiCode).toContain('referenceDate: "2026-03-02"');
  await page.addScriptTag({ path: await aiSdkBundle() });
  const bound = aiCode
    .replace("import { experimental_extract } from 'ai';", 'const { experimental_extract } = globalThis.aiSdk;')
    .replace("import { jevLocal } from 'jev-local/ai-sdk';", "const { jevLocal } = await import('/lib/ai-sdk.js');");
  const [[viaAiSdk]] = (await runSnippet(page, bound)) as [[Record<string, any>]];
  expect(Object.keys(viaAiSdk)).toEqual(Object.keys(response.answers));
  for (const [key, a] of Object.entries(response.answers)) {
    if (a.type === 'refusal') continue;
    expect(viaAiSdk[key], key).toMatchObject({ value: a.value, guess: a.guess, pNull: a.pNull, confidence: a.confidence });
  }

  // The draft survives a reload.
  await page.reload();
  await expect(page.getByTestId('engine-status')).toHaveAttribute('data-state', 'ready');
  await page.getByRole('tab', { name: 'Extract' }).click();
  await expect(panel.getByLabel('State: the text to read')).toHaveValue(STATE);
  await expect(panel.getByTestId('extract-field')).toHaveCount(3);
  await expect(panel.getByTestId('extract-field').nth(1).getByLabel('Decimals')).toHaveValue('2');
});

test('a labelled extraction set evaluated in the Extract tab: the metrics recomputed from the answers', async ({ page }) => {
  await open(page);
  // The first 6 invoices of the example set, as a file a person would pick.
  const text = readFileSync(resolve(REPO, 'eval/invoices.extraction.jsonl'), 'utf8').split('\n').slice(0, 6).join('\n');
  const items = parseExtractionSet(text);
  const panel = page.getByTestId('extract-eval');
  await panel.getByLabel('Labelled extraction set (.jsonl)').setInputFiles({ name: 'invoices-6.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from(text) });
  await expect(panel.getByTestId('extract-eval-loaded')).toContainText('6 items, 5 fields each');
  await panel.getByRole('button', { name: 'Evaluate' }).click();
  const report = panel.getByTestId('extract-eval-report');
  await expect(report).toBeVisible();

  // The same requests through the client, here: exact match per type recomputed independently.
  const answers = (await page.evaluate(async (requests) => {
    const jev = (window as any).jev;
    const out = [];
    for (const r of requests) out.push((await jev.extractions.create(r)).answers);
    return out;
  }, items.map((i) => i.request))) as Record<string, any>[];
  const byType = new Map<string, { n: number; hit: number }>();
  items.forEach((item, i) => {
    for (const [key, type] of Object.entries(item.types)) {
      const a = answers[i]![key];
      const want = item.expected[key];
      const got = a.type === 'refusal' ? undefined : a.value;
      const hit = got !== undefined && (typeof want === 'number' && typeof got === 'number' ? Math.abs(got - want) <= 1e-9 * Math.max(1, Math.abs(want)) : JSON.stringify(got) === JSON.stringify(want));
      const row = byType.get(type) ?? { n: 0, hit: 0 };
      row.n += 1;
      row.hit += hit ? 1 : 0;
      byType.set(type, row);
    }
  });
  const table = report.getByTestId('extract-eval-by-type');
  for (const [type, { n, hit }] of byType) {
    const row = table.locator(`tr[data-key="${type}"]`);
    await expect(row.locator('td').first()).toHaveText(String(n));
    await expect(row.locator('[data-metric=exact_match]')).toHaveText((hit / n).toFixed(3));
  }
  await expect(report.getByRole('img').first()).toHaveAccessibleName(/Reliability of .* confidence, ECE \d\.\d{3}/);
});
