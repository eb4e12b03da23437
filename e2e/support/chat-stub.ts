import type { Page } from '@playwright/test';

/**
 * Watches the chat requests the playground sends through its client (`window.jev`), and can
 * answer them with scripted replies instead of the engine: the page's handling of OpenAI's
 * shapes (tool-call deltas, JSON content, refusals) is then tested apart from what a model writes.
 * Installed before the page's own script, on every load of the page.
 */

/** One scripted answer: chunks streamed (then `data: [DONE]`), or a refusal as the client rejects. */
export type ScriptedReply = { chunks: unknown[] } | { error: { status: number; error: { message: string; type: string; param: string | null; code: string } } };

interface StubWindow {
  __chatSent: unknown[];
  __chatScript: ScriptedReply[];
}

export async function installChatStub(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const w = window as unknown as StubWindow & Record<string, unknown>;
    w.__chatSent = [];
    w.__chatScript = [];
    let client: { chat: { completions: { create: (req: unknown, opts?: unknown) => Promise<unknown> } } } | undefined;
    Object.defineProperty(window, 'jev', {
      configurable: true,
      get: () => client,
      set(value: typeof client) {
        client = value;
        if (!value) return;
        const real = value.chat.completions.create.bind(value.chat.completions);
        value.chat.completions.create = (req, opts) => {
          w.__chatSent.push(JSON.parse(JSON.stringify(req)));
          const next = w.__chatScript.shift();
          if (!next) return real(req, opts);
          if ('error' in next) return Promise.reject(Object.assign(new Error(next.error.error.message), next.error));
          return Promise.resolve(
            (async function* () {
              for (const c of next.chunks) {
                await new Promise((r) => setTimeout(r, 5));
                yield c;
              }
            })(),
          );
        };
      },
    });
  });
}

/** The next requests are answered by these, in order (then by the engine again). */
export async function scriptReplies(page: Page, ...replies: ScriptedReply[]): Promise<void> {
  await page.evaluate((r) => (window as unknown as StubWindow).__chatScript.push(...r), replies);
}

/** The chat request bodies sent since the page loaded. */
export async function sentBodies(page: Page): Promise<Record<string, unknown>[]> {
  return page.evaluate(() => (window as unknown as StubWindow).__chatSent as Record<string, unknown>[]);
}

function chunk(delta: Record<string, unknown>, finish: string | null = null) {
  return { id: 'chatcmpl-stub', object: 'chat.completion.chunk', created: 0, model: 'jev', choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] };
}

function usage(tokens: number) {
  return { id: 'chatcmpl-stub', object: 'chat.completion.chunk', created: 0, model: 'jev', choices: [], usage: { prompt_tokens: 20, completion_tokens: tokens, total_tokens: 20 + tokens } };
}

/** A reply whose content arrives in these pieces, ending with `finish`. */
export function textReply(pieces: readonly string[], finish = 'stop'): ScriptedReply {
  return {
    chunks: [chunk({ role: 'assistant', content: '' }), ...pieces.map((p) => chunk({ content: p })), chunk({}, finish), usage(pieces.length)],
  };
}

/** A reply of tool-call pieces, as OpenAI streams them (`delta.tool_calls`), ending with `tool_calls`. */
export function toolCallReply(pieces: readonly Record<string, unknown>[]): ScriptedReply {
  return {
    chunks: [chunk({ role: 'assistant', content: null }), ...pieces.map((p) => chunk({ tool_calls: [p] })), chunk({}, 'tool_calls'), usage(pieces.length)],
  };
}

/** A refusal as the client rejects it: 400 invalid_request naming `param`. */
export function refusal(param: string, message: string): ScriptedReply {
  return { error: { status: 400, error: { message, type: 'invalid_request_error', param, code: 'invalid_request' } } };
}
