// observe (src/evaluation/observe.ts): a response and an item's labels become observations in the
// answer order of the convention (noul true, false; choice the response's keys; score indices),
// and a label that does not fit is a DatasetError naming the line and the field.
import { describe, expect, it } from 'vitest';
import type { DecisionResponse } from '../../src/contract/index.ts';
import { DatasetError, observe, type EvalItem } from '../../src/evaluation/index.ts';

const item = (labels: EvalItem['labels']): EvalItem => ({
  line: 7,
  id: 'x',
  request: {
    model: 'jev',
    state: 'A parcel is late.',
    questions: {
      team: { type: 'choice', instructions: 'Which team?', criteria: { billing: null, shipping: null, '2': 'numeric key' } },
      late: { type: 'noul', instructions: 'Late?' },
      mood: { type: 'score', instructions: 'How angry?', criteria: ['calm', 'annoyed', 'furious'] },
    },
  },
  labels,
});

const RESPONSE: DecisionResponse = {
  id: 'dec_1',
  model: 'm',
  provider: 'cpu',
  answers: {
    // The engine lists integer-like keys first, as JavaScript does: "2", billing, shipping.
    team: { type: 'choice', choice: 'shipping', probabilities: { '2': 0.1, billing: 0.2, shipping: 0.7 }, confidence: 0.5, answer_mass: 0.25, prediction_set: ['shipping', 'billing'] },
    late: { type: 'noul', noul: 0.8 },
    mood: { type: 'score', score: 1.3, legend: { '0': 'calm', '1': 'annoyed', '2': 'furious' }, probabilities: { '0': 0.1, '1': 0.5, '2': 0.4 }, confidence: 0.3 },
  },
  usage: { input_tokens: 1, output_tokens: 1, cost: 0 },
};

describe('observe', () => {
  it('reads each answer in the convention order, with the expected index', () => {
    const [team, late, mood] = observe(item({ team: 'billing', late: 'false', mood: 'furious' }), 3, RESPONSE, 12.5);
    expect(team).toEqual({
      item: 3,
      key: 'team',
      type: 'choice',
      answers: ['2', 'billing', 'shipping'],
      probabilities: [0.1, 0.2, 0.7],
      expected: 1,
      answerMass: 0.25,
      latencyMs: 12.5,
      predictionSet: [2, 1],
    });
    expect(late).toMatchObject({ answers: ['true', 'false'], probabilities: [0.8, 1 - 0.8], expected: 1, answerMass: null, predictionSet: null });
    expect(mood).toMatchObject({ answers: ['0', '1', '2'], probabilities: [0.1, 0.5, 0.4], expected: 2 });
  });

  it('reads a score label as a grade label or an index, a number as a choice key', () => {
    expect(observe(item({ mood: 1 }), 0, RESPONSE, 0)[0]!.expected).toBe(1);
    expect(observe(item({ mood: '0' }), 0, RESPONSE, 0)[0]!.expected).toBe(0);
    expect(observe(item({ team: 2 }), 0, RESPONSE, 0)[0]!.expected).toBe(0);
    expect(observe(item({ late: true }), 0, RESPONSE, 0)[0]!.expected).toBe(0);
  });

  it('refuses a label that is not an answer, or of a question not asked, naming line and field', () => {
    for (const [labels, field, message] of [
      [{ team: 'sales' }, 'labels.team', /not an option/],
      [{ mood: 3 }, 'labels.mood', /integer from 0 to 2/],
      [{ late: 'yes' }, 'labels.late', /true or false/],
      [{ colour: 'red' }, 'labels.colour', /asks no question "colour"/],
    ] as const) {
      const error = (() => {
        try {
          observe(item(labels), 0, RESPONSE, 0);
        } catch (e) {
          return e;
        }
        return null;
      })();
      expect(error).toBeInstanceOf(DatasetError);
      expect(error).toMatchObject({ line: 7, field });
      expect((error as Error).message).toMatch(message);
    }
  });
});
