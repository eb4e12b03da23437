import { useLayoutEffect, useRef } from 'preact/hooks';

/**
 * Focuses an element (by id) right after the next render commits. Not on a later animation
 * frame: by then the person (or a test) may already be typing in another field, and the focus
 * would jump away from it mid-word.
 */
export function useFocusAfterRender(): (id: string | null) => void {
  const pending = useRef<string | null>(null);
  useLayoutEffect(() => {
    const id = pending.current;
    if (id === null) return;
    pending.current = null;
    document.getElementById(id)?.focus();
  });
  return (id) => {
    pending.current = id;
  };
}
