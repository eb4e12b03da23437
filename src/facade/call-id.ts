import { nanoid } from 'nanoid';

export function newCallId(): string {
  return `call_${nanoid(16)}`;
}
