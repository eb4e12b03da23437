// One request of OpenAI's Decisions shape that uses every part of it, the same request in the Jev shape
// written by hand (docs/decisions.md, "OpenAI's shape"), and the OpenAI answers read off a Jev response:
// test/http/openai-decisions.test.ts (Node) and e2e/openai-decisions.spec.ts (Chromium).
import type { DecisionResponse, OpenAIDecision } from '../../src/contract/index.ts';

/** Every part of the shape: messages of each role, text and JSON parts, a function call and its output; predicate, choice (string, boolean, and both with the same text), score; named and unnamed. */
export const REQUEST = {
  model: 'jev',
  input: [
    { role: 'system', content: 'You route support tickets.' },
    { role: 'user', content: [{ type: 'input_text', text: 'My invoice was charged twice.' }, { type: 'input_json', data: { order: 42, amount: [10, 10] } }] },
    { type: 'function_call', call_id: 'call_1', name: 'lookup_invoice', arguments: '{"order":42}' },
    { type: 'function_call_output', call_id: 'call_1', output: 'Two charges of 10 EUR found.' },
    { role: 'assistant', content: [{ type: 'output_text', text: 'I see two charges.' }] },
  ],
  questions: [
    { type: 'predicate', name: 'urgent', instructions: 'Is it urgent?' },
    { type: 'choice', name: 'team', instructions: 'Which team?', choices: [{ value: 'billing', description: 'Invoices' }, { value: 'tech', description: 'Bugs' }, { value: 'sales' }] },
    { type: 'choice', instructions: 'Refund?', choices: [{ value: true, description: 'yes' }, { value: false }] },
    { type: 'choice', name: 'typed', instructions: 'Which kind?', choices: [{ value: true }, { value: 'true', description: 'the word' }, { value: 'maybe' }] },
    { type: 'score', name: 'mood', instructions: [{ type: 'input_text', text: 'How angry?' }], levels: [{ label: 'calm' }, { label: 'annoyed', description: 'a little' }, { label: 'angry' }] },
  ],
} as const;

/** The same request in the Jev shape, by hand (docs/decisions.md, "OpenAI's shape"). */
export const JEV = {
  model: 'jev',
  state: [
    'system: You route support tickets.',
    'user: My invoice was charged twice.\n{\n  "amount": [\n    10,\n    10\n  ],\n  "order": 42\n}',
    'function_call call_1: lookup_invoice({"order":42})',
    'function_call_output call_1: Two charges of 10 EUR found.',
    'assistant: I see two charges.',
  ].join('\n\n'),
  questions: {
    urgent: { type: 'noul', instructions: 'Is it urgent?' },
    team: { type: 'choice', instructions: 'Which team?', criteria: { billing: 'Invoices', tech: 'Bugs', sales: null } },
    question_2: { type: 'choice', instructions: 'Refund?', criteria: { true: 'yes', false: null } },
    typed: { type: 'choice', instructions: 'Which kind?', criteria: { true: null, '"true"': 'the word', '"maybe"': null } },
    mood: { type: 'score', instructions: 'How angry?', criteria: ['calm', 'annoyed: a little', 'angry'] },
  },
  include: ['answer_mass'],
};

/** What the OpenAI answers must be, read off the Jev response. */
export function expected(jev: DecisionResponse): OpenAIDecision['answers'] {
  const a = jev.answers as Record<string, any>;
  return [
    { type: 'predicate', name: 'urgent', probability: a.urgent.noul },
    {
      type: 'choice',
      name: 'team',
      choice: a.team.choice,
      confidence: a.team.confidence,
      probabilities: ['billing', 'tech', 'sales'].map((v) => ({ value: v, probability: a.team.probabilities[v] })),
    },
    {
      type: 'choice',
      name: null,
      choice: a.question_2.choice === 'true',
      confidence: a.question_2.confidence,
      probabilities: [
        { value: true, probability: a.question_2.probabilities.true },
        { value: false, probability: a.question_2.probabilities.false },
      ],
    },
    {
      type: 'choice',
      name: 'typed',
      choice: ({ true: true, '"true"': 'true', '"maybe"': 'maybe' } as Record<string, boolean | string>)[a.typed.choice]!,
      confidence: a.typed.confidence,
      probabilities: [
        { value: true, probability: a.typed.probabilities.true },
        { value: 'true', probability: a.typed.probabilities['"true"'] },
        { value: 'maybe', probability: a.typed.probabilities['"maybe"'] },
      ],
    },
    {
      type: 'score',
      name: 'mood',
      score: a.mood.score,
      confidence: a.mood.confidence,
      probabilities: ['calm', 'annoyed', 'angry'].map((label, i) => ({ label, value: i, probability: a.mood.probabilities[String(i)] })),
    },
  ];
}

