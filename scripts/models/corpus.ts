/**
 * A small English text the test tokenizer's merges are trained on. Written for this project
 * (no third-party text). It mixes everyday prose, questions and answers, short decisions and a
 * little JSON/code so the most frequent short words and some punctuation become single tokens.
 */
export const TRAINING_CORPUS = `
The quick brown fox jumps over the lazy dog. The dog does not mind; it is a very lazy dog.
Is the sky blue? Yes. Is the grass red? No. Is water wet? Yes, it is. Is fire cold? No, it is not.
The answer is true. The answer is false. True or false: the sun rises in the east. True.
True or false: two plus two is five. False. Yes or no: can a fish swim? Yes. Can a stone fly? No.
You are a helpful assistant. The user asks a question and the assistant gives a short answer.
When the question is clear, the answer should be clear too. When it is not, ask what the user means.

Once upon a time there was a small town by the sea. In the town there lived a baker, a teacher and
a young girl who wanted to be a sailor. Every morning the baker made bread, the teacher opened the
school, and the girl walked to the harbour to watch the boats. She counted them one by one: one,
two, three, four, five, six, seven, eight, nine, ten. Some days there were more boats than others.
"Why do the boats leave so early?" she asked an old fisherman. "Because the fish are hungry in the
morning," he said, and he laughed. She did not know if that was true, but she liked the answer.

A decision needs a question, a set of options and a reason. For example: should we take the train
or the bus? The train is faster but the bus is cheaper. If time matters more than money, take the
train. If money matters more, take the bus. The decision is: train. The reason is: it is faster.
Another example: is this email spam? It asks for a password and the sender is unknown, so the
answer is yes, it is spam. A third example: is the number 7 prime? Yes. Is 9 prime? No, 9 is 3 times 3.

{"decision": "yes", "confidence": 0.9, "reason": "the statement is true"}
{"decision": "no", "confidence": 0.7, "reason": "the statement is false"}
{"answer": true, "label": "positive", "score": 1}
{"answer": false, "label": "negative", "score": 0}
{"choice": "train", "options": ["train", "bus", "car"], "explanation": "it is the fastest option"}
[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
function add(a, b) { return a + b; }
if (value === true) { return "yes"; } else { return "no"; }
const result = await model.generate({ input: text, max_tokens: 32 });

People often say that the simplest answer is the best one, but that is not always true. Sometimes
the simple answer is wrong and the long answer is right. A good assistant should think about the
question, look at the facts, and then give an answer that is both short and correct. It should say
"I do not know" when it does not know, and it should never make up facts that are not true.

What is the weather like today? It is sunny and warm, with a light wind from the west. Tomorrow it
will rain in the morning and clear up in the afternoon. Take an umbrella if you go out early.
What time is it? It is half past three in the afternoon. How long is the meeting? About an hour.
Where is the station? Go straight ahead, turn left at the church, and it is on your right.
Who wrote this letter? My sister wrote it last week, when she was still living in the city.
Which colour do you like best: red, green or blue? I like green best, because it is the colour of
trees, fields and leaves in the spring. My brother likes blue, and my mother likes red.

The cat sat on the mat and looked at the bird in the tree. The bird looked back at the cat and did
not move. After a while the cat went to sleep, and the bird flew away over the roofs of the houses.
The children played in the park until the sun went down, and then they went home for dinner. There
was soup, bread, cheese, apples and a big chocolate cake. Everyone was happy, and nobody was hungry.

Science tells us that water boils at one hundred degrees at sea level, that light travels faster
than sound, and that the earth goes around the sun once a year. These statements are true. The moon
is made of cheese: that statement is false. Plants need light, water and air to grow. Animals need
food, water and a safe place to live. People need all of these things, and also friends and work.

Please answer with yes or no. Please answer with true or false. Please choose one of the options.
Please explain your answer in one sentence. Thank you for your help! You are welcome. Good morning,
good afternoon, good evening and good night. Hello, how are you? I am fine, thank you, and you?
The system says: the request was accepted. The system says: the request was rejected. Try again.
Error: the input is empty. Warning: the value is too large. Note: this field is optional.
`;

/** Words that must be single tokens (also with a leading space and capitalised). */
export const REQUIRED_WORDS: readonly string[] = [
  'the', 'true', 'false', 'yes', 'no', 'null', 'and', 'of', 'to', 'a', 'in', 'is', 'it', 'that',
  'you', 'I', 'answer', 'decision', 'reason', 'not', 'assistant', 'user', 'system',
];
