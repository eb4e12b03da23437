/**
 * The two labelled extraction sets (eval/invoices.extraction.jsonl, eval/appointments.extraction.jsonl),
 * generated with their labels by write-examples.ts. Each text is assembled from the values it
 * carries, so every expected value (and null, where a line was left out) is true by construction,
 * and every labelled span is where the value's surface form was written. They test the
 * evaluation's mechanics, not a model's quality: the texts are templated and few.
 */
import type { Xoshiro128 } from '../../models/prng.ts';

export interface ExtractionRow {
  id: string;
  state: string;
  fields: Record<string, unknown>;
  referenceDate?: string;
  expected: Record<string, string | number | null>;
  sources: Record<string, { part: number; start: number; end: number }>;
}

const pick = <T>(rng: Xoshiro128, values: readonly T[]): T => values[rng.nextInt(values.length)]!;
const pad = (n: number) => String(n).padStart(2, '0');
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

function isoDate(d: Date): string {
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}
function addDays(iso: string, days: number): string {
  const d = new Date(`${iso}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return isoDate(d);
}

/** A text built piece by piece, remembering where each labelled value was written. */
class Builder {
  text = '';
  readonly sources: ExtractionRow['sources'] = {};
  add(s: string): this {
    this.text += s;
    return this;
  }
  value(key: string, surface: string): this {
    this.sources[key] = { part: 0, start: this.text.length, end: this.text.length + surface.length };
    this.text += surface;
    return this;
  }
}

export const invoiceFields = {
  invoice_number: { type: 'text', instructions: 'The invoice number' },
  vendor: { type: 'text', instructions: 'The company that sent the invoice' },
  total: { type: 'number', instructions: 'The total amount due', unit: 'EUR', decimals: 2 },
  due_date: { type: 'date', instructions: 'When the payment is due' },
  po_number: { type: 'text', instructions: 'The purchase order number, if the invoice gives one' },
};

const VENDORS = ['Lindqvist Paper Goods', 'Harbour Office Supply', 'Greenfield Catering', 'Northwind Tiles', 'Blue Heron Print Shop', 'Atlas Cleaning Co'];
const CUSTOMERS = ['Oak Street Bakery', 'Riverside Dental', 'Maple Yoga Studio', 'Hill Road Garage'];
const ITEMS = ['paper boxes', 'toner cartridges', 'lunch platters', 'floor tiles', 'flyers', 'office cleaning hours'];

export function invoiceRows(rng: Xoshiro128, n: number): ExtractionRow[] {
  const rows: ExtractionRow[] = [];
  for (let i = 0; i < n; i++) {
    const b = new Builder();
    const number = `INV-${1000 + rng.nextInt(9000)}`;
    const vendor = pick(rng, VENDORS);
    const qty = 1 + rng.nextInt(9);
    const unitCents = 500 + rng.nextInt(20000);
    const totalCents = qty * unitCents;
    const total = (totalCents / 100).toFixed(2);
    const issued = isoDate(new Date(Date.UTC(2026, rng.nextInt(12), 1 + rng.nextInt(28))));
    const terms = pick(rng, [14, 30, 45]);
    const due = addDays(issued, terms);
    const hasPo = rng.nextInt(5) >= 2;
    const hasDue = rng.nextInt(6) !== 0;
    const po = `PO-${10000 + rng.nextInt(90000)}`;
    b.add('INVOICE ').value('invoice_number', number).add('\nFrom: ').value('vendor', vendor).add(`\nBill to: ${pick(rng, CUSTOMERS)}\nIssue date: ${issued}\n`);
    if (hasDue) b.add('Due date: ').value('due_date', due).add('\n');
    if (hasPo) b.add('Your order: ').value('po_number', po).add('\n');
    b.add(`\n${qty} x ${pick(rng, ITEMS)} at ${(unitCents / 100).toFixed(2)} EUR\n\nTotal due: `).value('total', total).add(' EUR\nThank you for your business.');
    rows.push({
      id: `invoice-${String(i + 1).padStart(3, '0')}`,
      state: b.text,
      fields: invoiceFields,
      referenceDate: issued,
      expected: { invoice_number: number, vendor, total: totalCents / 100, due_date: hasDue ? due : null, po_number: hasPo ? po : null },
      sources: b.sources,
    });
  }
  return rows;
}

export const appointmentFields = {
  patient: { type: 'text', instructions: 'The name of the person asking' },
  date: { type: 'date', instructions: 'The day asked for' },
  time: { type: 'time', instructions: 'The time of day asked for' },
  length: { type: 'duration', instructions: 'How long the appointment takes', unit: 'minutes', integer: true },
  phone: { type: 'text', instructions: 'A phone number to call back' },
};

const NAMES = ['Maya Okafor', 'Tom Becker', 'Ines Duarte', 'Sam Whitfield', 'Lena Novak', 'Omar Haddad', 'Grace Liu'];
const REASONS = ['a check-up', 'a cleaning', 'a follow-up visit', 'a vaccination', 'an eye test'];

export function appointmentRows(rng: Xoshiro128, n: number): ExtractionRow[] {
  const rows: ExtractionRow[] = [];
  for (let i = 0; i < n; i++) {
    const b = new Builder();
    const reference = isoDate(new Date(Date.UTC(2026, rng.nextInt(12), 1 + rng.nextInt(28))));
    const name = pick(rng, NAMES);
    const hour = 8 + rng.nextInt(10);
    const minute = pick(rng, [0, 15, 30, 45]);
    const time = `${pad(hour)}:${pad(minute)}`;
    const hasLength = rng.nextInt(3) !== 0;
    const length = pick(rng, [15, 20, 30, 45, 60]);
    const hasPhone = rng.nextInt(2) === 0;
    const phone = `0${100 + rng.nextInt(900)} ${100 + rng.nextInt(900)} ${1000 + rng.nextInt(9000)}`;
    // The day: written as a date ("14 May"), or as the next weekday after the reference date (no span then).
    const ahead = 1 + rng.nextInt(20);
    const date = addDays(reference, ahead);
    const d = new Date(`${date}T00:00:00Z`);
    const written = rng.nextInt(2) === 0;
    b.add('Hi, this is ').value('patient', name).add(`. Could I book ${pick(rng, REASONS)} `);
    if (written) b.add('on ').value('date', `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]}`);
    else {
      // The next such weekday after the reference date: within 7 days, so it names exactly one day.
      const within = addDays(reference, 1 + (ahead % 7));
      const w = new Date(`${within}T00:00:00Z`);
      b.add(`next ${DAYS[w.getUTCDay()]}`);
      rows.push(finish(b, i, reference, name, within, time, hasLength, length, hasPhone, phone, false));
      continue;
    }
    rows.push(finish(b, i, reference, name, date, time, hasLength, length, hasPhone, phone, true));
  }
  return rows;
}

function finish(b: Builder, i: number, reference: string, name: string, date: string, time: string, hasLength: boolean, length: number, hasPhone: boolean, phone: string, dateSpan: boolean): ExtractionRow {
  b.add(' at ').value('time', time).add('?');
  if (hasLength) b.add(' It should take about ').value('length', String(length)).add(' minutes.');
  if (hasPhone) b.add(' You can reach me on ').value('phone', phone).add('.');
  b.add(' Thanks!');
  // A written date ("14 May") is where the date was found; a relative one ("next Friday") has no labelled span.
  if (!dateSpan) delete b.sources['date'];
  return {
    id: `appointment-${String(i + 1).padStart(3, '0')}`,
    state: b.text,
    fields: appointmentFields,
    referenceDate: reference,
    expected: { patient: name, date, time, length: hasLength ? length : null, phone: hasPhone ? phone : null },
    sources: b.sources,
  };
}
