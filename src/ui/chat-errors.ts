import type { SettingErrors } from './chat-settings.tsx';
import type { ErrorInfo } from './error-info.ts';
import { parseParam } from './parse-param.ts';

/** Where a chat error shows: beside a setting, or beside the message box. */
export interface ChatErrors {
  settings: SettingErrors;
  composer?: string | undefined;
}

export const noChatErrors: ChatErrors = { settings: {} };

const SETTING_OF: Record<string, keyof SettingErrors> = {
  temperature: 'temperature',
  top_p: 'topP',
  max_tokens: 'maxTokens',
  max_completion_tokens: 'maxTokens',
  seed: 'seed',
};

/** Places an engine error by its `param`; `messages[0]` is the system prompt when there is one. */
export function placeChatError(info: ErrorInfo, systemFirst: boolean): ChatErrors {
  const path = parseParam(info.param);
  const head = path[0];
  const setting = typeof head === 'string' ? SETTING_OF[head] : undefined;
  if (setting) return { settings: { [setting]: info.message } };
  if (head === 'messages' && path[1] === 0 && systemFirst) return { settings: { system: info.message } };
  return { settings: {}, composer: info.message };
}
