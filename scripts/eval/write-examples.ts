/**
 * `npx tsx scripts/eval/write-examples.ts [--check]`
 *
 * Writes the example data sets under eval/ from the hand-written fragments in
 * scripts/eval/examples/, with a seeded generator, so the files are reproducible byte for byte:
 * - eval/ticket-routing.jsonl: 160 customer-support tickets (queue, urgent, frustration);
 * - eval/sentiment.jsonl: 120 product reviews (sentiment, stars), and the same reviews as
 *   eval/sentiment.csv with their questions in eval/sentiment.questions.json (the CSV variant).
 * - eval/invoices.extraction.jsonl (40 invoices) and eval/appointments.extraction.jsonl (40
 *   appointment requests): labelled extraction sets, each value (or null) and its span written by
 *   the generator (examples/extraction-sets.ts). They test the evaluation's mechanics, not a model.
 * Each label is true by construction: the fragment that carries it was written for it (see the
 * fragment files). `--check` writes nothing and fails if a file differs from what it would write.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import Papa from 'papaparse';
import { Xoshiro128 } from '../models/prng.ts';
import { joins, products, ratings, reviewQuestions } from './examples/reviews.ts';
import { devices, months, plans, signOffs, ticketCores, ticketQuestions, tone } from './examples/tickets.ts';
import { appointmentRows, invoiceRows, type ExtractionRow } from './examples/extraction-sets.ts';

const REPO = resolve(import.meta.dirname, '../..');
export const TICKETS = 160;
export const REVIEWS = 120;
export const INVOICES = 40;
export const APPOINTMENTS = 40;

interface Row {
  id: string;
  state: string;
  labels: Record<string, string | boolean>;
}

/** The example files, path (relative to the repository) → content. */
export function exampleFiles(): Record<string, string> {
  const tickets = ticketRows(new Xoshiro128(17));
  const reviews = reviewRows(new Xoshiro128(1717));
  return {
    'eval/ticket-routing.jsonl': jsonl(tickets, ticketQuestions),
    'eval/sentiment.jsonl': jsonl(reviews, reviewQuestions),
    'eval/sentiment.csv': `${Papa.unparse(
      reviews.map((r) => ({ id: r.id, state: r.state, ...r.labels })),
      { columns: ['id', 'state', ...Object.keys(reviewQuestions)], newline: '\n' },
    )}\n`,
    'eval/sentiment.questions.json': `${JSON.stringify(reviewQuestions, null, 2)}\n`,
    'eval/invoices.extraction.jsonl': extractionJsonl(invoiceRows(new Xoshiro128(59), INVOICES)),
    'eval/appointments.extraction.jsonl': extractionJsonl(appointmentRows(new Xoshiro128(5959), APPOINTMENTS)),
  };
}

function extractionJsonl(rows: ExtractionRow[]): string {
  return rows.map((r) => `${JSON.stringify(r)}\n`).join('');
}

function jsonl(rows: Row[], questions: object): string {
  return rows.map((r) => `${JSON.stringify({ id: r.id, state: r.state, questions, labels: r.labels })}\n`).join('');
}

const pick = <T>(rng: Xoshiro128, values: readonly T[]): T => values[rng.nextInt(values.length)]!;

function shuffled<T>(rng: Xoshiro128, values: readonly T[]): T[] {
  const out = [...values];
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.nextInt(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function ticketRows(rng: Xoshiro128): Row[] {
  const rows: Row[] = [];
  const seen = new Set<string>();
  let order: typeof ticketCores = [];
  while (rows.length < TICKETS) {
    if (order.length === 0) order = shuffled(rng, ticketCores);
    const core = order.pop()!;
    const urgent = core.urgent.length === 0 ? false : core.calm.length === 0 ? true : rng.nextFloat() < 0.4;
    const frustration = rng.nextInt(core.maxFrustration + 1);
    const body = fill(rng, pick(rng, urgent ? core.urgent : core.calm));
    const open = pick(rng, tone[frustration]!.open);
    const close = pick(rng, tone[frustration]!.close);
    const signOff = pick(rng, signOffs);
    let text = open === '' ? body : open.endsWith(',') ? `${open}\n\n${body}` : `${open} ${body}`;
    if (close) text += ` ${close}`;
    if (signOff) text += `\n\n${signOff}`;
    if (seen.has(text)) continue;
    seen.add(text);
    rows.push({
      id: `t${String(rows.length + 1).padStart(3, '0')}`,
      state: text,
      labels: { queue: core.queue, urgent, frustration: ticketQuestions.frustration.criteria[frustration]! },
    });
  }
  return rows;
}

function fill(rng: Xoshiro128, template: string): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    switch (name) {
      case 'order': return `#${100000 + rng.nextInt(900000)}`;
      case 'invoice': return `INV-${2024 + rng.nextInt(3)}-${String(rng.nextInt(10000)).padStart(4, '0')}`;
      case 'amount': return `${pick(rng, ['$', '€', '£'])}${10 + rng.nextInt(490)}.${pick(rng, ['00', '99', '50', '49'])}`;
      case 'month': return pick(rng, months);
      case 'days': return String(3 + rng.nextInt(9));
      case 'plan': return pick(rng, plans);
      case 'device': return pick(rng, devices);
      default: throw new Error(`unknown placeholder {${name}}`);
    }
  });
}

function reviewRows(rng: Xoshiro128): Row[] {
  const rows: Row[] = [];
  const seen = new Set<string>();
  // Every product at every rating, in a shuffled order, round after round until there are enough.
  const all = products.flatMap((product) => ratings.map((_, stars) => ({ product, stars })));
  let slots: typeof all = [];
  while (rows.length < REVIEWS) {
    if (slots.length === 0) slots = shuffled(rng, all);
    const { product, stars } = slots.pop()!;
    const rating = ratings[stars]!;
    const good = shuffled(rng, product.good).slice(0, rating.good);
    const bad = shuffled(rng, product.bad).slice(0, rating.bad);
    const middle: string[] = [];
    if (stars === 4 || stars === 0) middle.push(sentence(both(stars === 4 ? good : bad)));
    else if (stars === 3) middle.push(sentence(both(good)), fill2(pick(rng, joins.minorComplaint), null, bad[0]!));
    else if (stars === 2) middle.push(fill2(pick(rng, joins.mixed), good[0]!, bad[0]!));
    else middle.push(sentence(both(bad)), fill2(pick(rng, joins.faintPraise), good[0]!, null));
    const open = pick(rng, rating.open).replace('{this}', product.plural ? 'these' : 'this').replace('{name}', product.name);
    const close = pick(rng, rating.close);
    const text = [open, ...middle, close].filter((s) => s !== '').join(' ');
    if (seen.has(text)) continue;
    seen.add(text);
    rows.push({
      id: `r${String(rows.length + 1).padStart(3, '0')}`,
      state: text,
      labels: { sentiment: stars >= 3 ? 'positive' : stars === 2 ? 'neutral' : 'negative', stars: reviewQuestions.stars.criteria[stars]! },
    });
  }
  return rows;
}

function both(points: string[]): string {
  return points.join(', and ');
}

function sentence(text: string): string {
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

function fill2(template: string, good: string | null, bad: string | null): string {
  const text = template.replace('{good}', good ?? '').replace('{bad}', bad ?? '');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function main(): void {
  const check = process.argv.includes('--check');
  let stale = 0;
  for (const [path, content] of Object.entries(exampleFiles())) {
    const file = resolve(REPO, path);
    if (check) {
      let current = '';
      try {
        current = readFileSync(file, 'utf8');
      } catch {
        // missing: stale
      }
      if (current !== content) {
        console.error(`${path} differs from what scripts/eval/write-examples.ts writes`);
        stale++;
      }
    } else {
      writeFileSync(file, content);
      console.log(`wrote ${path}`);
    }
  }
  if (stale > 0) process.exit(1);
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) main();
