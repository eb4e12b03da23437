/**
 * The ticket-routing example set (eval/ticket-routing.jsonl): hand-written fragments, put together
 * by write-examples.ts. A ticket is an opening and a closing that set its tone (the frustration
 * label), and a core that says what is wrong (the queue label) in a calm or an urgent form (the
 * urgent label). Cores are written in a neutral voice so that the tone comes only from the opening
 * and the closing, and the urgent form says why it cannot wait (money lost, service down, a
 * deadline within a day, a security risk), which the calm form never does.
 */
import type { QuestionInput } from '../../../src/contract/index.ts';

export const ticketQuestions = {
  queue: {
    type: 'choice',
    instructions: 'Which support team should handle this customer ticket?',
    criteria: {
      billing: 'Charges, invoices, receipts, refunds, payment methods, plans and prices',
      technical: 'Bugs, errors, crashes, outages, slow pages, integrations, devices and the API',
      account: 'Signing in, passwords, two-factor codes, profile details, users and permissions, closing an account',
      shipping: 'Orders on their way, tracking, delivery addresses, lost, late or damaged parcels, return labels, customs',
    },
  },
  urgent: {
    type: 'noul',
    instructions: 'Does this ticket need action today?',
    criteria: {
      true: 'Money is being lost, a service is down or someone is blocked, a deadline falls within a day, or there is a security risk',
      false: 'It can wait its turn in the normal queue',
    },
  },
  frustration: {
    type: 'score',
    instructions: 'How frustrated is the customer who wrote this ticket?',
    criteria: ['calm', 'slightly bothered', 'annoyed', 'angry', 'furious'],
  },
} satisfies Record<string, QuestionInput>;

export type Queue = keyof typeof ticketQuestions.queue.criteria;

export interface TicketCore {
  queue: Queue;
  calm: string[];
  urgent: string[];
  /** Highest frustration that reads naturally with this core (a plain question is not furious). */
  maxFrustration: number;
}

const core = (queue: Queue, calm: string[], urgent: string[], maxFrustration = 4): TicketCore => ({ queue, calm, urgent, maxFrustration });

/** Placeholders: {order} {invoice} {amount} {month} {days} {plan} {device}. */
export const ticketCores: TicketCore[] = [
  // billing
  core('billing', ['I was charged twice for my {month} invoice ({invoice}). Could you refund the duplicate payment?'], ['I was charged twice for my {month} invoice ({invoice}) and the second charge of {amount} has put my bank account into overdraft. The duplicate needs to be refunded today.']),
  core('billing', ['I sent the headphones from order {order} back {days} days ago and the refund of {amount} still has not appeared on my card.'], ['I returned order {order} {days} days ago and I am still waiting for the refund of {amount}. My rent is due tomorrow and I need that money back before then.']),
  core('billing', ["I'm on the Basic plan but this month's invoice ({invoice}) bills me for {plan}. Can you correct it?"], ["I'm on the Basic plan but you billed me {amount} for {plan}, and the card is set to be charged again tomorrow morning. Please fix the plan before that charge goes through."]),
  core('billing', ['How do I update the credit card on file? The current one expires at the end of next month.'], ['My card was cancelled after a fraud alert and my subscription renewal fails tonight. How do I add a new card before the service is cut off?']),
  core('billing', ['Could you re-issue invoice {invoice} with our company VAT number on it? Our accountant needs it for the records.'], ['Could you re-issue invoice {invoice} with our company VAT number? Our auditors need the corrected copy by the end of today.']),
  core('billing', ['I cancelled my subscription last week but was still charged {amount} for this month. Can that be refunded?'], ['I cancelled my subscription last week but you still charged {amount}, the payment bounced, and my bank is now adding a fee every day it stays pending. Please reverse it today.']),
  core('billing', ["What's the price difference between paying monthly and yearly for the {plan} plan? Is there a discount for nonprofits?"], ["Our nonprofit's budget is approved tomorrow morning, so I need a written quote for the yearly {plan} plan by this afternoon."], 1),
  core('billing', ['The discount code SPRING20 was not applied at checkout on order {order}, so I paid the full {amount}. Could you refund the difference?'], []),
  core('billing', ["There is a charge of {amount} from your company on my statement that I don't recognise. Could you tell me what it was for?"], ["There is a charge of {amount} from you on my card that I did not make. If someone is using my card I have to block it right away, so please tell me now what it was for."]),
  core('billing', ['From next quarter, could we pay by bank transfer instead of by card?'], ['Our company card was frozen this morning and the renewal payment is due today. Can we pay by bank transfer instead so the account is not suspended?'], 2),
  core('billing', ['I need a receipt for order {order} for my expense report. Where can I download one?'], ['I need a receipt for order {order} and my expense report has to be filed before tonight, or I will not be reimbursed.'], 2),
  core('billing', ['The product page showed one price but I was charged {amount} at checkout for order {order}. Can you explain the difference?'], []),
  core('billing', ['My annual renewal went up by 30% without any notice. Why did the price of the {plan} plan change?'], []),
  // technical
  core('technical', ['The iPhone app crashes every time I open it since the latest update.'], ["The iPhone app has crashed on launch since this morning's update and my whole sales team cannot log their visits. We are losing orders while it is broken."]),
  core('technical', ["When I export my reports to CSV I get 'Error 500' and nothing downloads."], ["Exporting reports to CSV fails with 'Error 500', and the quarterly report is due to our board in three hours."]),
  core('technical', ["Your API returns '429 Too Many Requests' even though we are far below our rate limit."], ['Since 8 am every call to your payments API returns 429 errors, so our customers cannot complete their purchases. We are losing sales every minute.']),
  core('technical', ['The Slack integration stopped posting notifications to our channel a few days ago.'], ['The Slack integration stopped posting alerts this morning. Our on-call pages go through it, so nobody is being notified about outages right now.']),
  core('technical', ["Changes I make on my laptop don't sync to my phone any more."], ["Changes from my laptop don't reach my phone, and I present from that phone at a conference in one hour. The slides I fixed last night are not there."]),
  core('technical', ['Pages on your website take a very long time to load in the evenings, often 20 seconds or more.'], ["The shop we run on your platform has been down for 40 minutes: every page says 'Service unavailable' and we are losing sales."]),
  core('technical', ['I no longer get email notifications when someone comments on my documents.'], ['Password-reset emails from our app stopped being sent yesterday, so our users cannot get back into their accounts.']),
  core('technical', ['In dark mode some button labels are unreadable: black text on a dark grey background.'], [], 2),
  core('technical', ["The editor's toolbar does not show up in Firefox. Is Firefox supported?"], [], 2),
  core('technical', ['After the update, the entries I made since Monday are missing from the dashboard.'], ["After last night's update every entry since Monday is gone from the dashboard. That is a week of patient records and we need them for tomorrow's clinic."]),
  core('technical', ["Importing a CSV file larger than 10 MB fails with 'Upload failed'."], ["Importing our customer list fails with 'Upload failed' every time, and the campaign has to go out to those customers tomorrow at 9 am."]),
  core('technical', ['My {device} will not connect to Wi-Fi after the firmware update.'], ["Our {device} has not connected to Wi-Fi since the firmware update, and it is the shop's only card reader, so we cannot take payments at all."]),
  core('technical', ['The search on the help center returns no results for any word I type.'], [], 3),
  core('technical', ['The webhook for new orders fires twice for every order, so we get duplicate entries in our system.'], ['The new-order webhook fires twice for every order, and our warehouse has been packing and shipping every order twice since this morning.']),
  // account
  core('account', ['I asked for a password reset three times but the email never arrives.'], ["I asked for a password reset three times and the email never arrives. I'm locked out of the account I need to submit a tender by 5 pm today."]),
  core('account', ["How do I change the email address on my account? I'm moving to a new work address."], [], 1),
  core('account', ['I have a new phone and lost my two-factor codes. How do I get back into my account?'], ['I lost the phone with my two-factor app and cannot sign in. Payroll has to run today and I am the only admin on the account.']),
  core('account', ['I got an email about a new sign-in from my new laptop. That was me, but where can I see the list of devices that are signed in?'], ["I just got an alert about a sign-in to my account from another country, and it wasn't me. Please lock the account and help me secure it."], 1),
  core('account', ['How do I give a colleague read-only access to our workspace?'], ["Our new accountant starts the year-end close tomorrow morning and needs admin rights, but the 'Invite user' button is greyed out for me."], 1),
  core('account', ['Please close my account and delete my personal data.'], []),
  core('account', ['I accidentally created two accounts with different email addresses. Can you merge them into one?'], []),
  core('account', ["My name is misspelled on my profile and the field won't let me edit it."], [], 3),
  core('account', ['My account was locked after too many sign-in attempts.'], ['My account was locked after too many sign-in attempts. I am a teacher and my class starts an exam on the platform in 30 minutes.']),
  core('account', ['Someone left our team last month. How do I remove their access to our workspace?'], ['We let an employee go today and he still has admin access to our account. His access has to be removed right away.'], 2),
  core('account', ['Can two people share one sign-in, or does each of us need our own account?'], [], 1),
  core('account', ['I keep getting signed out every few minutes and have to enter my password again.'], []),
  // shipping
  core('shipping', ['The tracking for order {order} has not updated in {days} days.'], ["The tracking for order {order} has not moved in {days} days, and it's a birthday present for tomorrow."]),
  core('shipping', ['My parcel for order {order} arrived with the box crushed, and the lamp inside is cracked. Can you send a replacement?'], []),
  core('shipping', ['I typed the wrong house number on order {order}. Can you change the delivery address?'], ['I typed the wrong house number on order {order} and the courier is out for delivery today. Can you change the address before it goes to the wrong house?']),
  core('shipping', ['Tracking says order {order} was delivered yesterday, but nothing arrived at my door.'], []),
  core('shipping', ['Do you ship to Norway, and how long does delivery usually take?'], [], 1),
  core('shipping', ["I'd like to send back the jacket from order {order}. Could you email me a return shipping label?"], [], 2),
  core('shipping', ['Order {order} arrived, but the charger was missing from the box.'], []),
  core('shipping', ['I paid for express delivery on order {order}, but it still says processing after {days} days.'], ['I paid for express delivery on order {order} because I need the suit for a wedding on Saturday, and it still says processing.']),
  core('shipping', ['Only one of the two items in order {order} has arrived. Is the other one coming separately?'], []),
  core('shipping', ['My package is held at customs and they are asking for an invoice. What should I do?'], ['My package is held at customs and they will send it back unless I provide an invoice by tomorrow.']),
  core('shipping', ['Can order {order} be delivered to a pick-up point instead of my home address?'], [], 1),
  core('shipping', ['My order {order} of frozen meals has been at the local depot since Monday.'], ['My order {order} of frozen meals has been sitting at the depot since Monday and it will spoil if it is not delivered today.']),
  core('shipping', ['The courier left order {order} with a neighbour I do not know, without asking me.'], []),
];

/** Openings and closings by frustration level: 0 calm, 1 slightly bothered, 2 annoyed, 3 angry, 4 furious. */
export const tone: { open: string[]; close: string[] }[] = [
  {
    open: ['Hi there,', 'Hello,', 'Good morning,', 'Hi team,', 'Hello support,', ''],
    close: ['Thanks so much for your help!', 'Thank you, have a nice day.', 'Many thanks in advance.', 'Appreciate it, thanks.', 'Thanks!', ''],
  },
  {
    open: ["Hi, I'm a little confused about this.", 'Hello, a small problem here.', 'Hi, hoping you can help, this is a bit inconvenient.', "Hi, I'm slightly puzzled."],
    close: ['A bit disappointing, but I am sure it is an easy fix. Thanks.', 'Would appreciate a look when you can.', "Not a big deal, but I'd like it sorted.", 'Slightly annoying, thanks for checking.'],
  },
  {
    open: ['Hello. I have to say this is getting annoying.', "I'm pretty annoyed, to be honest.", 'This is frustrating.', 'Hi. Not happy about this.'],
    close: ['Please sort this out.', 'Not great, honestly.', 'I expected this to just work.', 'Please fix this, I have wasted enough time on it.'],
  },
  {
    open: ["I'm really angry about this.", "This is the second time I'm writing about this and I'm fed up.", 'Honestly, this is unacceptable.', 'I am very upset.'],
    close: ['This is not acceptable.', 'I expected a lot better from you.', 'Your support has been useless so far.', 'I am seriously considering other options.'],
  },
  {
    open: ['This is absolutely ridiculous!!', 'I am FURIOUS.', 'Unbelievable. Third email, still nothing!!!', 'What a joke of a company.'],
    close: ["Fix it or I'm cancelling and telling everyone I know to stay away from you.", 'Worst service I have ever dealt with. I want to speak to a manager.', 'I am done with you people.', 'Pathetic. I will be leaving a review everywhere I can.'],
  },
];

export const signOffs = ['', '', '— Maria', 'Tom', 'Best, J. Okafor', 'Priya S.', 'Sent from my phone', 'Regards, Lukas Brenner', 'Ana', 'K. Tanaka'];
export const months = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
export const plans = ['Pro', 'Team', 'Business', 'Premium'];
export const devices = ['card reader', 'label printer', 'smart thermostat', 'receipt printer'];
