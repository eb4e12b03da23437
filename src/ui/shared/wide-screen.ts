/** Whether there is room to open settings at first (on a phone the conversation comes first). */
export function wideScreen(): boolean {
  return matchMedia('(min-width: 700px)').matches;
}
