/**
 * Starting points for the Extract tab: an invoice, an appointment request, a contact card and a
 * clinical note. Synthetic texts written for this page (no real person, company or patient), in
 * plain ASCII so that even a tiny test model's vocabulary reads them.
 */
export interface ExtractPreset {
  id: string;
  label: string;
  state: string;
  referenceDate: string;
  fields: Record<string, unknown>;
}

export const EXTRACT_PRESETS: readonly ExtractPreset[] = [
  {
    id: 'invoice',
    label: 'Invoice',
    state:
      'INVOICE INV-2041\nFrom: Lindqvist Paper Goods, 14 Harbour Road, Bristol\nBill to: Oak Street Bakery\n' +
      'Issue date: 2026-03-02\nDue date: 2026-04-01\n\n3 x A4 paper boxes at 18.50 EUR\n1 x Label printer at 92.00 EUR\n\n' +
      'Subtotal: 147.50 EUR\nVAT (20%): 29.50 EUR\nTotal due: 177.00 EUR\nPayment terms: 30 days',
    referenceDate: '2026-03-02',
    fields: {
      invoice_number: { type: 'text', instructions: 'The invoice number' },
      vendor: { type: 'text', instructions: 'Who sent the invoice' },
      total: { type: 'number', instructions: 'The total amount due', unit: 'EUR', decimals: 2 },
      due_date: { type: 'date', instructions: 'When the payment is due' },
      payment_terms: { type: 'duration', instructions: 'The payment terms', unit: 'days', integer: true },
      purchase_order: { type: 'text', instructions: 'The purchase order number, if any' },
    },
  },
  {
    id: 'appointment',
    label: 'Appointment request',
    state:
      'Hi, this is Maya Okafor. Could I book a check-up with Dr. Brandt next Thursday at 14:30? ' +
      'It should take about 45 minutes. My number is 0161 496 0732. Thanks!',
    referenceDate: '2026-05-04',
    fields: {
      patient: { type: 'text', instructions: 'The name of the person asking' },
      doctor: { type: 'text', instructions: 'The doctor asked for' },
      date: { type: 'date', instructions: 'The day asked for' },
      time: { type: 'time', instructions: 'The time of day asked for' },
      length: { type: 'duration', instructions: 'How long the appointment takes', unit: 'minutes', integer: true },
      phone: { type: 'text', instructions: 'A phone number to call back' },
    },
  },
  {
    id: 'contact-card',
    label: 'Contact card',
    state:
      'Priya Raman\nHead of Operations, Northwind Tiles Ltd\npriya.raman@northwind-tiles.example\n' +
      'Mobile: +44 7700 900123\n22 Mill Lane, Leeds LS1 4AB\nLanguages: English, Tamil, French',
    referenceDate: '2026-01-15',
    fields: {
      name: { type: 'text', instructions: 'The full name' },
      company: { type: 'text', instructions: 'The company' },
      email: { type: 'text', instructions: 'The email address' },
      phone: { type: 'text', instructions: 'The phone number' },
      languages: { type: 'list', instructions: 'The languages spoken', items: 'text' },
      birthday: { type: 'date', instructions: 'The date of birth' },
    },
  },
  {
    id: 'clinical-note',
    label: 'Clinical note',
    state:
      'Clinic visit 2026-02-11 09:40. Patient J. Doe, born 1961-07-23, reports a dry cough for 6 days. ' +
      'Temperature 37.8 C, pulse 88. Started amoxicillin 500 mg three times daily for 7 days. ' +
      'Review in 2 weeks if not better.',
    referenceDate: '2026-02-11',
    fields: {
      visit: { type: 'datetime', instructions: 'When the visit took place' },
      date_of_birth: { type: 'date', instructions: "The patient's date of birth" },
      temperature: { type: 'number', instructions: 'Body temperature in degrees Celsius', unit: 'C', decimals: 1 },
      symptom_length: { type: 'duration', instructions: 'How long the symptoms have lasted', unit: 'days', integer: true },
      medication: { type: 'text', instructions: 'The medication started' },
      allergies: { type: 'list', instructions: 'Known allergies', items: 'text' },
    },
  },
];
