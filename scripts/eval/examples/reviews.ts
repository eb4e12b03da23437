/**
 * The sentiment example set (eval/sentiment.jsonl): hand-written fragments of product reviews,
 * put together by write-examples.ts. A review is written for a star rating: its opening and
 * closing say how the buyer feels at that rating, and its middle picks the product's good and
 * bad points in the proportion the rating implies (5: only good; 4: good, one small complaint;
 * 3: as much good as bad; 2: mostly bad; 1: only bad). The sentiment follows the stars: 4–5
 * positive, 3 neutral, 1–2 negative.
 */
import type { QuestionInput } from '../../../src/contract/index.ts';

export const reviewQuestions = {
  sentiment: {
    type: 'choice',
    instructions: 'What is the overall sentiment of this product review?',
    criteria: {
      positive: 'The buyer is happy with the product',
      negative: 'The buyer is unhappy with the product',
      neutral: 'Mixed or lukewarm: neither happy nor unhappy overall',
    },
  },
  stars: {
    type: 'score',
    instructions: 'How many stars did the buyer most likely give?',
    criteria: ['1 star', '2 stars', '3 stars', '4 stars', '5 stars'],
  },
} satisfies Record<string, QuestionInput>;

export interface Product {
  name: string;
  /** A plural name (earbuds, shoes) reads "these", not "this". */
  plural?: true;
  good: string[];
  bad: string[];
}

export const products: Product[] = [
  { name: 'wireless earbuds', plural: true, good: ['the sound is clear and full', 'the battery easily lasts a whole day', 'they stay in my ears when I run'], bad: ['the left earbud keeps disconnecting', 'the charging case feels flimsy', 'the microphone makes me sound muffled on calls'] },
  { name: 'coffee grinder', good: ['the grind is very even', "it's quieter than my old one", 'it is easy to clean'], bad: ['it sprays grounds all over the counter', 'the lid cracked in the first week', 'it overheats after a couple of minutes'] },
  { name: 'running shoes', plural: true, good: ['they are light and well cushioned', 'the fit was perfect out of the box', 'the grip is great on wet roads'], bad: ['the sole started peeling after a month', 'they rub my heel raw', 'the laces are far too short'] },
  { name: 'desk lamp', good: ['the light is bright and even', 'the arm holds any position', 'the dimmer is smooth'], bad: ['it flickers at low brightness', 'the base wobbles', 'the switch already feels loose'] },
  { name: 'backpack', good: ['it has plenty of pockets', 'the straps are comfortable even when it is full', 'it kept my laptop dry in heavy rain'], bad: ['a zipper broke within two weeks', 'the seams are fraying already', 'it smells strongly of chemicals'] },
  { name: 'blender', good: ['it crushes ice in seconds', 'smoothies come out silky', 'the jug is solid and easy to pour from'], bad: ['it is incredibly loud', 'the jug leaks from the bottom', 'the motor smells like it is burning'] },
  { name: 'phone case', good: ['it fits snugly', 'my phone survived a drop onto concrete', 'the buttons are still easy to press'], bad: ['it turned yellow within a month', 'the edges are already chipped', 'it makes wireless charging stop working'] },
  { name: 'electric kettle', good: ['it boils water really fast', 'it switches off reliably', 'the handle stays cool'], bad: ['the water tastes of plastic', 'the lid does not close properly', 'it started leaking after a few weeks'] },
  { name: 'office chair', good: ['my back feels much better after long days', 'it was easy to assemble', 'the armrests adjust in every direction'], bad: ['it squeaks every time I lean back', 'the seat cushion flattened quickly', 'one of the wheels snapped off'] },
  { name: 'yoga mat', good: ['it has great grip even when I sweat', 'it is thick enough for my knees', 'it rolls up easily'], bad: ['it tears at the corners', 'it slides around on a wooden floor', 'it still smells of rubber after weeks'] },
  { name: 'bluetooth speaker', good: ['the bass is surprisingly deep', 'it pairs instantly', 'it survived a day at the beach'], bad: ['it cuts out when I walk into the next room', 'the battery barely lasts two hours', 'it hisses at low volume'] },
  { name: 'frying pan', good: ['nothing sticks to it', 'it heats evenly', 'it cleans up in seconds'], bad: ['the coating started flaking', 'the handle gets very hot', 'it warped on the first use'] },
  { name: 'winter jacket', good: ['it is really warm', 'the hood stays up in the wind', 'it looks smart enough for the office'], bad: ['the zip keeps getting stuck', 'it soaked through in light rain', 'the stitching came apart at the shoulder'] },
  { name: 'mechanical keyboard', good: ['typing on it feels great', 'the keys are nicely weighted', 'the backlight is even'], bad: ['some keys register twice', 'the software is a mess', 'the space bar rattles'] },
  { name: 'water bottle', good: ['it keeps drinks cold all day', 'it does not leak in my bag', 'it is easy to clean'], bad: ['the paint chipped straight away', 'the lid leaks when it is tipped over', 'it makes water taste metallic'] },
  { name: 'vacuum cleaner', good: ['the suction is strong', 'it picks up pet hair easily', 'it is light enough to carry upstairs'], bad: ['the battery dies after ten minutes', 'the bin is tiny and fills up fast', 'the brush gets tangled constantly'] },
  { name: 'e-reader', good: ['the screen is easy on the eyes', 'the battery lasts weeks', 'it is light enough to hold in one hand'], bad: ['the screen froze several times', 'page turns are sluggish', 'it will not open some of my books'] },
  { name: 'garden hose', good: ['it does not kink', 'the spray nozzle has useful settings', 'it coils away neatly'], bad: ['it burst at the connector', 'it leaks at the tap fitting', 'it is much shorter than advertised'] },
  { name: 'baby monitor', good: ['the picture is clear even at night', 'the range reaches the whole house', 'setting it up took two minutes'], bad: ['the connection drops every night', 'the parent unit battery is weak', 'the alarm goes off for no reason'] },
  { name: 'air fryer', good: ['the fries come out crisp', 'it preheats quickly', 'the basket is easy to wash'], bad: ['the non-stick coating peeled off', 'it fills the kitchen with smoke', 'the timer dial broke'] },
];

/** By star rating (index 0 = 1 star): openings ({this}: this or these), closings, and how many good and bad points the middle holds. */
export const ratings: { open: string[]; close: string[]; good: number; bad: number }[] = [
  {
    open: ['Complete waste of money.', 'Terrible {name}.', 'Do not buy {this} {name}.', 'Awful.', 'Very disappointed.'],
    close: ['Returning for a refund.', 'Avoid.', 'I want my money back.', 'One star is generous.', ''],
    good: 0,
    bad: 2,
  },
  {
    open: ['Not impressed with {this} {name}.', 'Disappointing.', 'I expected much more from {this} {name}.', 'Below average.'],
    close: ["Wouldn't buy again.", 'Not worth the price.', 'I am looking for a replacement.', ''],
    good: 1,
    bad: 2,
  },
  {
    open: ['Okay {name}.', 'Mixed feelings about {this} {name}.', 'Average.', 'It does the job, more or less.'],
    close: ['Nothing special.', "Fine for the price, I guess.", 'Neither great nor terrible.', ''],
    good: 1,
    bad: 1,
  },
  {
    open: ['Really good {name}.', 'Happy with this purchase.', 'Solid {name}.', 'Very nice overall.'],
    close: ['Would recommend.', 'Good value.', 'I would buy again.', ''],
    good: 2,
    bad: 1,
  },
  {
    open: ['Absolutely love {this} {name}!', 'Best {name} I have ever owned.', 'Fantastic.', 'Perfect {name}.', 'Exceeded my expectations.'],
    close: ['Highly recommend!', 'Would buy again in a heartbeat.', 'Worth every penny.', ''],
    good: 2,
    bad: 0,
  },
];

/** How a rating joins its good and bad points (the 4-star complaint is a small one). */
export const joins = {
  minorComplaint: ['My only complaint is that {bad}.', 'A small downside: {bad}.', 'Not perfect, though: {bad}.'],
  mixed: ['{good}, but {bad}.', 'On one hand {good}; on the other, {bad}.', '{good}. Then again, {bad}.'],
  faintPraise: ['{good}, but that hardly makes up for it.', 'To be fair, {good}, but that is all.'],
};
