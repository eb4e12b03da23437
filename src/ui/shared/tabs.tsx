import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export interface Tab {
  id: string;
  label: string;
  content: ComponentChildren;
}

const fromHash = (tabs: readonly Tab[]) => tabs.find((t) => `#${t.id}` === location.hash)?.id ?? tabs[0]!.id;

/**
 * Tabs as the ARIA pattern has them (arrow keys, Home, End). Every panel stays mounted, so a
 * reply keeps streaming while another tab is shown. The address's hash remembers the tab.
 */
export function Tabs({ tabs, label }: { tabs: readonly Tab[]; label: string }) {
  const [active, setActive] = useState(() => fromHash(tabs));
  useEffect(() => {
    const onHash = () => setActive(fromHash(tabs));
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, [tabs]);
  const select = (id: string, focus: boolean) => {
    setActive(id);
    history.replaceState(null, '', `${location.pathname}${location.search}#${id}`);
    if (focus) document.getElementById(`tab-${id}`)?.focus();
  };
  const onKey = (e: KeyboardEvent) => {
    const i = tabs.findIndex((t) => t.id === active);
    const to =
      e.key === 'ArrowRight' ? (i + 1) % tabs.length : e.key === 'ArrowLeft' ? (i - 1 + tabs.length) % tabs.length : e.key === 'Home' ? 0 : e.key === 'End' ? tabs.length - 1 : -1;
    if (to < 0) return;
    e.preventDefault();
    select(tabs[to]!.id, true);
  };
  return (
    <div class="tabs">
      <div role="tablist" aria-label={label} class="tablist" onKeyDown={onKey}>
        {tabs.map((t) => (
          <button
            type="button"
            role="tab"
            id={`tab-${t.id}`}
            key={t.id}
            aria-selected={t.id === active}
            aria-controls={`tabpanel-${t.id}`}
            tabIndex={t.id === active ? 0 : -1}
            onClick={() => select(t.id, false)}
          >
            {t.label}
          </button>
        ))}
      </div>
      {tabs.map((t) => (
        <div role="tabpanel" id={`tabpanel-${t.id}`} key={t.id} aria-labelledby={`tab-${t.id}`} hidden={t.id !== active}>
          {t.content}
        </div>
      ))}
    </div>
  );
}
