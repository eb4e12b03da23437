/**
 * Starting points for the decision builder: the four uses the specification names. Texts stay
 * in plain ASCII so that even a tiny test model's vocabulary reads them.
 */
export interface DecisionPreset {
  id: string;
  label: string;
  state: string;
  questions: Record<string, unknown>;
}

export const PRESETS: readonly DecisionPreset[] = [
  {
    id: 'ticket-routing',
    label: 'Ticket routing',
    state:
      'Hi, I was charged twice for my subscription this month and now the app keeps logging me out. ' +
      'Please sort this out today, I have a client demo tomorrow morning.',
    questions: {
      team: {
        type: 'choice',
        instructions: 'Which team should handle this ticket first?',
        criteria: {
          billing: 'Charges, refunds, invoices and plans',
          technical: 'Bugs, crashes, log-in problems and outages',
          account: 'Profile, password and access settings',
          sales: 'New purchases and upgrades',
        },
      },
      urgent: {
        type: 'noul',
        instructions: 'Does the customer need an answer today?',
        criteria: { true: 'They name a deadline or say it cannot wait', false: 'It can wait for the normal queue' },
      },
      priority: {
        type: 'score',
        instructions: 'How high a priority is this ticket?',
        criteria: ['low', 'normal', 'high', 'critical'],
      },
    },
  },
  {
    id: 'intent-detection',
    label: 'Intent detection',
    state: 'Could you move my dentist appointment from Tuesday to Thursday afternoon?',
    questions: {
      intent: {
        type: 'choice',
        instructions: 'What does the user want to do?',
        criteria: {
          book: 'Make a new appointment',
          reschedule: 'Move an existing appointment',
          cancel: 'Call off an appointment',
          ask: 'Ask for information only',
        },
      },
      names_time: {
        type: 'noul',
        instructions: 'Does the message name a day or a time?',
        criteria: { true: 'A day, date or time of day is given', false: 'No day or time is given' },
      },
    },
  },
  {
    id: 'moderation',
    label: 'Moderation',
    state: 'This is the third time you posted the same link. Nobody wants your cheap pills, go away.',
    questions: {
      allowed: {
        type: 'noul',
        instructions: 'Can this comment stay up as it is?',
        criteria: { true: 'It is civil and on topic', false: 'It breaks the community rules' },
      },
      category: {
        type: 'choice',
        instructions: 'What kind of problem does the comment show, if any?',
        criteria: {
          none: 'No problem',
          spam: 'Advertising or repeated links',
          harassment: 'Insults or attacks on a person',
          hate: 'Attacks on a group',
        },
      },
      severity: {
        type: 'score',
        instructions: 'How severe is the problem?',
        criteria: ['none', 'mild', 'moderate', 'severe'],
      },
    },
  },
  {
    id: 'sentiment',
    label: 'Sentiment scoring',
    state:
      'The kettle boils fast and looks great on the counter, but the lid started to squeak after a week ' +
      'and support took five days to answer me.',
    questions: {
      sentiment: {
        type: 'score',
        instructions: 'How does the customer feel about the product overall?',
        criteria: ['very negative', 'negative', 'mixed', 'positive', 'very positive'],
      },
      recommends: {
        type: 'noul',
        instructions: 'Would the customer recommend the product?',
        criteria: { true: 'They sound like they would recommend it', false: 'They would not recommend it' },
      },
      topic: {
        type: 'choice',
        instructions: 'Which aspect does the customer complain about most?',
        criteria: { quality: 'How well the product is made', support: 'Customer service', price: 'Cost', delivery: 'Shipping' },
      },
    },
  },
];
