/**
 * The decision the family and format specs ask every model: one support ticket and three
 * questions on it, one of each type (true/false, choice with a null criterion, score).
 */
export const TICKET_DECISION = {
  model: 'jev',
  state: 'Ticket: "I was charged twice for my plan this month." The customer wants the duplicate refunded.',
  questions: {
    refund: { type: 'noul', instructions: 'Does the customer want money back?' },
    team: { type: 'choice', instructions: 'Which team?', criteria: { billing: 'Charges and refunds', technical: 'Bugs', account: null } },
    anger: { type: 'score', instructions: 'How angry?', criteria: ['calm', 'annoyed', 'furious'] },
  },
} as const;
