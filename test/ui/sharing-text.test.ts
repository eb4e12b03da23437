import { describe, expect, it } from 'vitest';
import { sharingText } from '../../src/ui/model/sharing-text.ts';

describe("the Model panel's line on tabs (status().sharing)", () => {
  const base = { mode: 'origin' as const, tab: 'tab_a', host: 'tab_a', hosting: true, tabs: 1 };
  it('says this tab hosts, and how many other tabs use its engine', () => {
    expect(sharingText(base)).toBe('This tab hosts the engine; no other tab uses it yet. Closing this tab hands the engine to another.');
    expect(sharingText({ ...base, tabs: 2 })).toContain('; 1 other tab uses it.');
    expect(sharingText({ ...base, tabs: 4 })).toContain('; 3 other tabs use it.');
  });
  it('names the hosting tab where another tab hosts', () => {
    expect(sharingText({ ...base, tab: 'tab_b', hosting: false, tabs: 3 })).toBe(
      'Served by the engine of another tab (tab_a); 3 tabs share it. This tab holds no copy of the model.',
    );
  });
  it("says so where the engine is this tab's own (share: 'tab')", () => {
    expect(sharingText(null)).toContain('not shared');
  });
});
