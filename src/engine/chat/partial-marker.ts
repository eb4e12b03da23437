/**
 * How much of a growing text to hold back because it may still become a marker (a stop sequence,
 * a tool call's opening tag): the length of the longest end of `text` that begins one of
 * `markers` without being all of it. TextStream and ToolCallStream both hold text back by it.
 */
export function partialMarkerLength(text: string, markers: readonly string[]): number {
  let held = 0;
  for (const marker of markers) {
    for (let k = Math.min(marker.length - 1, text.length); k > held; k--) {
      if (text.endsWith(marker.slice(0, k))) {
        held = k;
        break;
      }
    }
  }
  return held;
}
