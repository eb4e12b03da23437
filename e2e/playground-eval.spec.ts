import { readFileSync } from 'node:fs';
import { expect, test, type Locator, type Page } from '@playwright/test';
import { DIST, EXTRA_PORT, MIRROR } from './support/env.ts';
import { STRICT_CSP, watchViolations } from './support/csp.ts';
import { startStatic } from './support/static-server.ts';

/**
 * The playground's evaluation section and its calibration profiles, driven as a person would, on
 * the generated tiny-random-llama (wasm, fp32). What the page shows is checked against numbers the
 * test computes itself from answers it asks `window.jev` for, request by request.
 */
const APP = `/?model=tiny-random-llama&host=${encodeURIComponent(MIRROR)}&device=wasm&dtype=fp32`;

type Probabilities = { answers: string[]; p: number[] };
type Answer = { type: 'noul'; noul: number; answer_mass?: number; prediction_set?: string[] } | { type: 'choice' | 'score'; probabilities: Record<string, number>; answer_mass?: number; prediction_set?: string[] };
type Request = { model: string; state: string; questions: Record<string, any>; calibrate?: boolean };

/** Ten tickets with expected answers for the Ticket routing preset's three questions. */
const TICKETS: { id: string; state: string; labels: { team: string; urgent: boolean; priority: number } }[] = [
  { id: 't1', state: 'I was charged twice for my plan this month, please refund one of the payments.', labels: { team: 'billing', urgent: false, priority: 1 } },
  { id: 't2', state: 'The app crashes every time I open the settings page. I need it working before my meeting in an hour.', labels: { team: 'technical', urgent: true, priority: 3 } },
  { id: 't3', state: 'How do I change the email address on my profile?', labels: { team: 'account', urgent: false, priority: 0 } },
  { id: 't4', state: 'We want to buy twenty more seats for our team. Who can send us a quote?', labels: { team: 'sales', urgent: false, priority: 1 } },
  { id: 't5', state: 'Nobody in our office can log in since this morning. This cannot wait.', labels: { team: 'technical', urgent: true, priority: 3 } },
  { id: 't6', state: 'My invoice shows the wrong company name. Please fix it by Friday for our books.', labels: { team: 'billing', urgent: false, priority: 1 } },
  { id: 't7', state: 'I forgot my password and the reset link never arrives. I have a demo today.', labels: { team: 'account', urgent: true, priority: 2 } },
  { id: 't8', state: 'Can I upgrade from the basic plan to the pro plan in the middle of the month?', labels: { team: 'sales', urgent: false, priority: 0 } },
  { id: 't9', state: 'The export button gives an error when the report has more than a thousand rows.', labels: { team: 'technical', urgent: false, priority: 2 } },
  { id: 't10', state: 'You took money from my card after I cancelled. I want it back today.', labels: { team: 'billing', urgent: true, priority: 2 } },
];

async function open(page: Page) {
  await page.goto(APP);
  await expect(page.getByTestId('engine-status')).toHaveAttribute('data-state', 'ready');
}

/** Loads the Ticket routing preset, decides, and returns the request the form sent (from its Request JSON). */
async function presetRequest(page: Page): Promise<Request & { include?: string[] }> {
  await page.getByRole('button', { name: 'Ticket routing' }).click();
  await page.getByRole('button', { name: 'Decide', exact: true }).click();
  const result = page.getByTestId('decision-result');
  await expect(result).toBeVisible();
  await result.getByText('Request JSON').click();
  return JSON.parse((await result.getByTestId('raw-request').locator('pre').textContent())!);
}

function jsonl(questions: Record<string, unknown>, tickets = TICKETS): string {
  return tickets.map((t) => JSON.stringify({ id: t.id, state: t.state, questions, labels: t.labels })).join('\n') + '\n';
}

async function upload(page: Page, name: string, text: string) {
  await page.getByLabel(/Labelled set: drop a \.jsonl or \.csv file/).setInputFiles({ name, mimeType: name.endsWith('.csv') ? 'text/csv' : 'application/x-ndjson', buffer: Buffer.from(text) });
}

/** An answer's probabilities in the engine's answer order (noul true, false; choice keys; score grades ascending). */
function distribution(a: Answer): Probabilities {
  if (a.type === 'noul') return { answers: ['true', 'false'], p: [a.noul, 1 - a.noul] };
  const entries = Object.entries(a.probabilities);
  if (a.type === 'score') entries.sort(([x], [y]) => Number(x) - Number(y));
  return { answers: entries.map(([k]) => k), p: entries.map(([, p]) => p) };
}

/** Accuracy and multi-class Brier score of one question, from answers and expected answers, computed here. */
function scoreQuestion(answers: Answer[], expected: string[]): { accuracy: number; brier: number } {
  let right = 0;
  let brier = 0;
  answers.forEach((a, i) => {
    const { answers: names, p } = distribution(a);
    const truth = names.indexOf(expected[i]!);
    expect(truth, `expected ${expected[i]} among ${names.join(', ')}`).toBeGreaterThanOrEqual(0);
    let top = 0;
    for (let k = 1; k < p.length; k++) if (p[k]! > p[top]!) top = k;
    if (top === truth) right += 1;
    brier += p.reduce((s, pk, k) => s + (pk - (k === truth ? 1 : 0)) ** 2, 0);
  });
  return { accuracy: right / answers.length, brier: brier / answers.length };
}

function metricCell(page: Page, key: string, metric: string, mode: number): Locator {
  return page.locator(`[data-testid=eval-metrics][data-key="${key}"] [data-testid=metric][data-metric=${metric}][data-mode="${mode}"]`);
}

test('an evaluation shows accuracy and Brier score equal to those recomputed from the facade, and nothing leaves the page', async ({ page }) => {
  test.setTimeout(300_000);
  await open(page);
  const request = await presetRequest(page);
  expect(request.include, 'the playground asks for the answer mass and the prompt').toEqual(['answer_mass', 'prompt']);
  const snippets = page.locator('#decide-panel').getByTestId('snippets');
  await snippets.getByText('Use it from code').click();
  await expect(snippets.getByTestId('snippet-code')).not.toContainText('include');

  // The confidence line: the answer mass shown is the facade's for the same request.
  const same = (await page.evaluate((r) => (window as any).jev.decisions.create(r), request)) as { answers: Record<string, Answer> };
  for (const key of ['team', 'priority', 'urgent']) {
    const mass = same.answers[key]!.answer_mass!;
    expect(mass).toBeGreaterThan(0);
    const note = page.getByTestId('answer').and(page.locator(`[data-key=${key}]`)).getByTestId('confidence-note');
    const shown = note.getByTestId('answer-mass');
    expect(Number(await shown.getAttribute('data-value'))).toBeCloseTo(mass, 9);
    // One decimal of a percent from 0.1 % up, else two significant digits: either way within 5 % of the value.
    const percent = Number.parseFloat((await shown.textContent())!.replace('%', ''));
    expect(Math.abs(percent - mass * 100), `${key}: ${await shown.textContent()} for ${mass}`).toBeLessThanOrEqual(Math.max(0.05, mass * 100 * 0.05));
    await expect(note).toHaveAttribute('title', /answer mass/);
    if (mass < 0.05) await expect(note).toContainText('barely considered the allowed answers');
    else await expect(note).not.toContainText('barely considered');
  }

  const origin = new URL(page.url()).origin;
  const elsewhere: string[] = [];
  page.on('request', (r) => {
    if (/^https?:/.test(r.url()) && !r.url().startsWith(origin)) elsewhere.push(r.url());
  });

  await upload(page, 'tickets.jsonl', jsonl(request.questions));
  await expect(page.getByTestId('eval-set')).toContainText('tickets.jsonl: 10 items');
  await page.getByRole('button', { name: 'Run evaluation' }).click();
  await expect(page.getByTestId('eval-results')).toBeVisible({ timeout: 240_000 });
  await expect(page.getByTestId('eval-status')).toHaveText('Done: 2 passes over 10 items.');
  await expect(page.getByTestId('eval-metrics').first().locator('thead')).toContainText('calibrate off');

  // The same requests, sent by the test through the facade, calibrate off (pass 0) and on (pass 1).
  for (const [mode, calibrate] of [
    [0, false],
    [1, true],
  ] as const) {
    const answers = (await page.evaluate(
      ({ tickets, questions, calibrate }) =>
        Promise.all(tickets.map((t) => (window as any).jev.decisions.create({ model: 'jev', state: t.state, questions, ...(calibrate ? { calibrate } : {}) }))),
      { tickets: TICKETS, questions: request.questions, calibrate },
    )) as { answers: Record<string, Answer> }[];
    for (const key of ['team', 'urgent', 'priority'] as const) {
      const expected = TICKETS.map((t) => String(t.labels[key]));
      const want = scoreQuestion(
        answers.map((r) => r.answers[key]!),
        expected,
      );
      const accuracy = metricCell(page, key, 'accuracy', mode);
      const brier = metricCell(page, key, 'brier', mode);
      expect(Number(await accuracy.getAttribute('data-value')), `${key} accuracy, pass ${mode}`).toBeCloseTo(want.accuracy, 12);
      await expect(accuracy).toHaveText(`${(want.accuracy * 100).toFixed(1)}%`);
      expect(Number(await brier.getAttribute('data-value')), `${key} Brier, pass ${mode}`).toBeCloseTo(want.brier, 6);
      await expect(brier).toHaveText(want.brier.toFixed(4));
      await expect(metricCell(page, key, 'items', mode)).toHaveText('10');
    }
  }

  // A reliability diagram per question and pass, as an image the page drew.
  const diagrams = page.getByTestId('reliability-diagram');
  await expect(diagrams).toHaveCount(6);
  expect(await diagrams.first().getAttribute('src')).toMatch(/^data:image\/svg\+xml/);
  expect(await diagrams.first().evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);

  // The wrong answers listed are exactly the items whose top answer differs from the label (pass 0).
  const off = (await page.evaluate(
    ({ tickets, questions }) => Promise.all(tickets.map((t) => (window as any).jev.decisions.create({ model: 'jev', state: t.state, questions }))),
    { tickets: TICKETS, questions: request.questions },
  )) as { answers: Record<string, Answer> }[];
  const wrongWanted: string[] = [];
  TICKETS.forEach((t, i) => {
    for (const key of ['team', 'urgent', 'priority'] as const) {
      const { answers: names, p } = distribution(off[i]!.answers[key]!);
      if (names[p.indexOf(Math.max(...p))] !== String(t.labels[key])) wrongWanted.push(`${i + 1}:${key}`);
    }
  });
  // Past the first 20 rows the rest are one click away.
  const showAll = page.locator('[data-testid=eval-wrong][data-mode="0"]').getByRole('button', { name: /^Show all/ });
  if (wrongWanted.length > 20) await showAll.click();
  else await expect(showAll).toHaveCount(0);
  const wrongShown = await page
    .locator('[data-testid=eval-wrong][data-mode="0"] [data-testid=wrong-item]')
    .evaluateAll((rows) => rows.map((r) => `${r.getAttribute('data-line')}:${r.getAttribute('data-key')}`));
  expect(wrongShown.sort()).toEqual(wrongWanted.sort());

  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Download report.json' }).click();
  const report = JSON.parse(await (await (await download).createReadStream()).toArray().then((c) => Buffer.concat(c).toString('utf8')));
  expect(report.object).toBe('evaluation_report');
  expect(report.data).toEqual({ name: 'tickets.jsonl', items: 10 });
  expect(elsewhere, 'nothing left the page').toEqual([]);
});

test('after eval/sentiment.jsonl (120 items) the wrong answers show 20 rows each, the rest on "Show all", and download whole as JSONL', async ({ page }) => {
  test.setTimeout(300_000);
  await open(page);
  const items = readFileSync(new URL('../eval/sentiment.jsonl', import.meta.url), 'utf8');
  await upload(page, 'sentiment.jsonl', items);
  await expect(page.getByTestId('eval-set')).toContainText('sentiment.jsonl: 120 items');
  await page.getByRole('button', { name: 'Run evaluation' }).click();
  await expect(page.getByTestId('eval-results')).toBeVisible({ timeout: 240_000 });
  const lists = page.getByTestId('eval-wrong');
  expect(await lists.count()).toBeGreaterThanOrEqual(2);
  const report = (await page.evaluate(() => document.querySelector('[data-testid=eval-wrong] summary')!.textContent)) ?? '';
  const total = Number(/: (\d+)/.exec(report)?.[1]);
  expect(total, `a random model gets many of 240 answers wrong (${report})`).toBeGreaterThan(20);
  for (let i = 0; i < (await lists.count()); i++) {
    const list = lists.nth(i);
    await list.locator('summary').evaluate((s) => ((s.parentElement as HTMLDetailsElement).open = true));
    const n = await list.getByTestId('wrong-item').count();
    expect(n, `list ${i} opens with at most 20 rows`).toBeLessThanOrEqual(20);
  }
  const first = lists.first();
  await expect(first.getByTestId('wrong-item')).toHaveCount(20);
  await expect(first.getByTestId('wrong-count')).toHaveText(`The first 20 of ${total}.`);

  const download = page.waitForEvent('download');
  await first.getByRole('button', { name: `Download all ${total} (JSONL)` }).click();
  const file = await download;
  expect(file.suggestedFilename()).toBe('wrong-calibrate-off.jsonl');
  const text = await (await file.createReadStream()).toArray().then((c) => Buffer.concat(c).toString('utf8'));
  const rows = text.trim().split('\n').map((l) => JSON.parse(l) as { line: number; key: string; expected: string; got: string; state: string });
  expect(rows).toHaveLength(total);
  for (const r of rows) {
    expect(r.expected).not.toBe(r.got);
    expect(items.split('\n')[r.line - 1]).toContain(JSON.stringify(r.state).slice(1, -1).slice(0, 40));
  }

  await first.getByRole('button', { name: `Show all ${total}` }).click();
  await expect(first.getByTestId('wrong-item')).toHaveCount(total);
  const shown = await first.getByTestId('wrong-item').evaluateAll((trs) => trs.map((t) => `${t.getAttribute('data-line')}:${t.getAttribute('data-key')}`));
  expect(shown).toEqual(rows.map((r) => `${r.line}:${r.key}`));
  await expect(first.getByRole('button', { name: /^Show all/ })).toHaveCount(0);
});

test('a malformed line shows its line and field; a CSV takes the form questions; Stop stops a run and the engine keeps serving', async ({ page }) => {
  test.setTimeout(300_000);
  await open(page);
  const request = await presetRequest(page);

  const bad = jsonl(request.questions).split('\n');
  bad[2] = JSON.stringify({ id: 'bad', state: 'A ticket.', questions: request.questions, labels: { team: 'marketing' } });
  await upload(page, 'bad.jsonl', bad.join('\n'));
  const error = page.getByTestId('eval-error');
  await expect(error).toHaveText(/^line 3, field labels\.team: .+/);
  await expect(error).toContainText('marketing');
  await expect(page.getByRole('button', { name: 'Run evaluation' })).toBeDisabled();

  const csv = ['id,state,team,urgent', ...TICKETS.slice(0, 4).map((t) => `${t.id},"${t.state}",${t.labels.team},${t.labels.urgent}`)].join('\n');
  await upload(page, 'tickets.csv', csv);
  await expect(page.getByTestId('eval-set')).toContainText('tickets.csv: 4 items');
  await expect(page.getByTestId('eval-error')).toHaveCount(0);
  await upload(page, 'wrong.csv', 'state,team\nA ticket,marketing\n');
  await expect(page.getByTestId('eval-error')).toHaveText(/^line 1, field team: .+/);

  await upload(page, 'tickets.jsonl', jsonl(request.questions));
  // As soon as one request is done, the engine holds the next forward pass (jev.debug.hold): the
  // run is then still going, by construction, when Stop is pressed. The watch is in place before
  // the run starts: on a tiny model the whole run can end before a watch set up after the click.
  await page.evaluate(() => {
    (window as any).__evalHeld = new Promise<void>((resolve) => {
      const started = () => /^[1-9]\d* of /.test(document.querySelector('[data-testid=eval-progress-count]')?.textContent ?? '');
      const watch = new MutationObserver(() => {
        if (!started()) return;
        watch.disconnect();
        void (window as any).jev.debug.hold(0).then(() => resolve());
      });
      watch.observe(document.body, { subtree: true, childList: true, characterData: true });
    });
  });
  await page.getByRole('button', { name: 'Run evaluation' }).click();
  await page.evaluate(() => (window as any).__evalHeld);
  const count = (await page.getByTestId('eval-progress-count').textContent())!;
  const [done, total] = count.split(' of ').map(Number) as [number, number];
  expect(total).toBe(20);
  expect(done).toBeLessThan(total);
  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  await expect(page.getByTestId('eval-status')).toHaveText(/^Stopped after \d+ of 20 requests\.$/);
  await expect(page.getByTestId('eval-panel')).toHaveAttribute('data-phase', 'stopped');
  await expect(page.getByTestId('eval-results')).toHaveCount(0);
  await page.evaluate(() => (window as any).jev.debug.release());
  // Stopped means stopped: no forward pass runs while nothing is asked.
  const passes = () => page.evaluate(async () => (await (window as any).jev.status()).counters.forwardPasses as number);
  const before = await passes();
  await page.waitForTimeout(500);
  expect(await passes()).toBe(before);

  // The engine keeps serving: a decision, and the evaluation again, to the end.
  const served = await page.evaluate((questions) => (window as any).jev.decisions.create({ model: 'jev', state: 'Still there?', questions }), request.questions);
  expect(Object.keys(served.answers).sort()).toEqual(['priority', 'team', 'urgent']);
  await page.getByRole('button', { name: 'Run evaluation' }).click();
  await expect(page.getByTestId('eval-status')).toHaveText('Done: 2 passes over 10 items.', { timeout: 240_000 });
});

test('fit a profile, save it, apply it in the form: the card shows what the facade answers with it; the profile survives a reload and can be deleted', async ({ page }) => {
  test.setTimeout(300_000);
  await open(page);
  const request = await presetRequest(page);

  await upload(page, 'tickets.jsonl', jsonl(request.questions));
  await page.getByLabel(/Fit a calibration profile/).check();
  await page.getByLabel('Profile name').fill('bad id!');
  await expect(page.locator('#fit-id-error')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Run evaluation' })).toBeDisabled();
  await page.getByLabel('Profile name').fill('e2e-tickets');
  await page.getByLabel('Prediction set α on the held-out items').fill('0.2');
  await page.getByRole('button', { name: 'Run evaluation' }).click();
  await expect(page.getByTestId('eval-results')).toBeVisible({ timeout: 240_000 });
  await expect(page.getByTestId('eval-status')).toHaveText('Done: 3 passes over 10 items.');

  // Before and after on the held-out items, per question, as the profile records them.
  const fit = page.getByTestId('eval-fit');
  await expect(fit.getByTestId('fit-row')).toHaveCount(3);
  for (const cell of await fit.getByTestId('ece-before-after').all()) {
    const before = Number(await cell.getAttribute('data-before'));
    const after = Number(await cell.getAttribute('data-after'));
    await expect(cell).toHaveText(`${before.toFixed(4)} → ${after.toFixed(4)}`);
  }
  await fit.getByRole('button', { name: 'Save profile' }).click();
  await expect(fit.getByRole('status')).toContainText('Saved as e2e-tickets');
  const stored = await page.evaluate(() => ({
    local: JSON.parse(localStorage.getItem('jev.calibration.profiles') ?? '[]').map((p: any) => p.id),
    client: (window as any).jev.calibration.get('e2e-tickets'),
  }));
  expect(stored.local).toEqual(['e2e-tickets']);
  expect(stored.client.object).toBe('calibration_profile');

  // Apply it with a 80 % prediction set; the card matches the facade's answer to the same request.
  await page.getByLabel('Apply profile').selectOption('e2e-tickets');
  await page.getByLabel('Prediction set α', { exact: true }).fill('0.2');
  await page.getByRole('button', { name: 'Decide', exact: true }).click();
  const result = page.getByTestId('decision-result');
  await expect(result.getByTestId('raw-request').locator('pre')).toContainText('"calibration": "e2e-tickets"');
  const sent = JSON.parse((await result.getByTestId('raw-request').locator('pre').textContent())!);
  expect(sent.calibration).toBe('e2e-tickets');
  expect(sent.prediction_set).toEqual({ alpha: 0.2 });
  const snippets = page.locator('#decide-panel').getByTestId('snippets');
  await snippets.getByText('Use it from code').click();
  await expect(snippets.getByTestId('snippet-code')).toContainText('"calibration": "e2e-tickets"');

  const { state, questions } = request;
  const want = (await page.evaluate(
    (r) => (window as any).jev.decisions.create(r),
    { model: 'jev', state, questions, calibration: 'e2e-tickets', prediction_set: { alpha: 0.2 } },
  )) as { answers: Record<string, Answer> };
  const plain = (await page.evaluate((r) => (window as any).jev.decisions.create(r), { model: 'jev', state, questions })) as { answers: Record<string, Answer> };
  let changed = false;
  for (const key of ['team', 'urgent', 'priority']) {
    const card = page.getByTestId('answer').and(page.locator(`[data-key=${key}]`));
    const shown = await card.getByTestId('probability').evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-key'), Number(r.getAttribute('data-value'))] as const));
    const { answers, p } = distribution(want.answers[key]!);
    expect(shown.map(([k]) => k)).toEqual(answers);
    shown.forEach(([, v], i) => expect(v, `${key} ${answers[i]}`).toBeCloseTo(p[i]!, 9));
    if (distribution(plain.answers[key]!).p.some((x, i) => Math.abs(x - p[i]!) > 1e-6)) changed = true;
    const set = want.answers[key]!.prediction_set;
    if (set) {
      await expect(card.getByTestId('prediction-set')).toHaveAttribute('data-members', JSON.stringify(set));
      await expect(card.getByTestId('prediction-set')).toHaveText(/^80% set: \{.+\}$/);
    } else {
      await expect(card.getByTestId('prediction-set')).toHaveCount(0);
    }
  }
  expect(changed, 'the fitted profile changes some probability (else this test compares nothing new)').toBe(true);

  // A reload restores the saved profile into the client and the form.
  await page.reload();
  await expect(page.getByTestId('engine-status')).toHaveAttribute('data-state', 'ready');
  expect(await page.evaluate(() => (window as any).jev.calibration.list().map((p: any) => p.id))).toEqual(['e2e-tickets']);
  await expect(page.getByLabel('Apply profile')).toHaveValue('e2e-tickets');

  await page.getByRole('button', { name: 'Delete profile e2e-tickets' }).click();
  await expect(page.getByLabel('Apply profile')).toHaveValue('');
  await expect(page.getByLabel('Apply profile').locator('option')).toHaveText(['none']);
  expect(
    await page.evaluate(() => ({
      client: (window as any).jev.calibration.get('e2e-tickets'),
      local: JSON.parse(localStorage.getItem('jev.calibration.profiles') ?? '[]'),
    })),
  ).toEqual({ client: null, local: [] });
});

test('under the strict Content-Security-Policy of docs/offline.md, the results and their diagrams show with no violation', async ({ page }) => {
  const site = await startStatic(DIST, EXTRA_PORT.cspSite, { 'Content-Security-Policy': STRICT_CSP });
  try {
    const violations = await watchViolations(page);
    await page.goto(`${site.url}${APP}`);
    await expect(page.getByTestId('engine-status')).toHaveAttribute('data-state', 'ready');
    const questions = { team: { type: 'choice', instructions: 'Which team?', criteria: { billing: 'Money', technical: 'Bugs', account: 'Log-in' } } };
    const lines = TICKETS.filter((t) => t.labels.team !== 'sales')
      .slice(0, 4)
      .map((t) => JSON.stringify({ state: t.state, questions, labels: { team: t.labels.team } }));
    await upload(page, 'tickets.jsonl', lines.join('\n'));
    await page.getByRole('button', { name: 'Run evaluation' }).click();
    await expect(page.getByTestId('eval-results')).toBeVisible();
    const images = page.getByTestId('reliability-diagram');
    await expect(images).toHaveCount(2);
    for (const img of await images.all()) expect(await img.evaluate((i: HTMLImageElement) => i.complete && i.naturalWidth > 0)).toBe(true);
    expect(await violations()).toEqual([]);
  } finally {
    await site.close();
  }
});
