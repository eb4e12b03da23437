/**
 * An id for a row the page keeps and edits (a question, an option, a grade, a chat entry, a tool):
 * unique in this page and across reloads, so a stored row keeps its key in lists.
 */
let counter = 0;
export function newId(): string {
  counter += 1;
  return `${Date.now().toString(36)}-${counter}-${Math.random().toString(36).slice(2, 7)}`;
}
