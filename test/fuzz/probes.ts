/** Valid requests served before and during a campaign: their answers must not change. */
import { PROBE_CHAT, PROBE_DECISION } from '../reliability/malformed.ts';
import type { Endpoint } from './arbitraries.ts';

export const PROBES: Record<Endpoint, { body: unknown; answer: (result: unknown) => unknown }> = {
  decisions: { body: PROBE_DECISION, answer: (r) => (r as { answers: unknown }).answers },
  decisions_openai: {
    body: {
      model: 'jev',
      input: [{ role: 'user', content: 'The parcel arrived broken.' }],
      questions: [
        { type: 'predicate', name: 'damaged', instructions: 'Is something damaged?' },
        { type: 'choice', instructions: 'Refund?', choices: [{ value: true }, { value: false }, { value: 'true', description: 'the word' }] },
      ],
    },
    answer: (r) => (r as { answers: unknown }).answers,
  },
  extractions: {
    body: { model: 'jev', state: 'Invoice 7 is due 2025-03-31, total 99.50 EUR.', fields: { due: { type: 'date' }, total: { type: 'number', decimals: 2 } } },
    answer: (r) => (r as { answers: unknown }).answers,
  },
  chat: { body: PROBE_CHAT, answer: (r) => (r as { choices: { message: { content: string } }[] }).choices[0]!.message.content },
};
