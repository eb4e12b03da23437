/**
 * The errors the AI SDK provider raises itself, before any call reaches the client: each is a
 * JevError with a stable code (`invalid_request`, 400) and a `param` naming what the caller
 * passed to the AI SDK (`state[2]`, `prompt[0].content[1]`, `refuseBelowLabelMass`). Errors of the
 * call itself (a bad question, an unknown model, an abort) are the client's, passed on unchanged.
 */
import { JevError } from '../contract/index.ts';

const describe = (v: unknown): string => {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
};

export const providerMessages = {
  fileState: (index: number, mediaType: string) =>
    `state[${index}] is a file part (${mediaType}): the loaded model reads text only. Send the file's text as a text part, or its data as a JSON part.`,
  filePrompt: (mediaType: string) =>
    `A file part (${mediaType}) cannot be sent: the loaded model reads text only. Send the file's text as a text part.`,
  customPrompt: (kind: string) => `A custom content part (${kind}) cannot be sent to this provider: it reads text, reasoning, tool calls and tool results.`,
  refuseBelowLabelMass: (got: unknown) => `refuseBelowLabelMass must be a number from 0 to 1 (the share of the next-token probability on a question's labels); got ${describe(got)}.`,
  noSuchModel: (kind: 'embeddingModel' | 'imageModel', id: string) =>
    `jev-local has no ${kind === 'embeddingModel' ? 'embedding' : 'image'} models (asked for "${id}"): it serves languageModel() and decisionModel().`,
} as const;

export function invalidArgument(message: string, param: string): JevError {
  return new JevError('invalid_request', message, { param });
}
