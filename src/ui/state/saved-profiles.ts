/**
 * The playground's calibration profiles: kept by the client (`client.calibration`, which resolves
 * a request's `calibration: id`), persisted by the page in localStorage so they survive a reload.
 * The library keeps profiles in memory only; remembering them is this page's choice, made here.
 */
import { signal, type Signal } from '@preact/signals';
import type { CalibrationProfile } from '../../contract/index.ts';
import type { JevClient } from '../../facade/jev-client.ts';

/** Where the saved profiles live: a JSON array of profiles. */
export const PROFILES_KEY = 'jev.calibration.profiles';

export interface SavedProfiles {
  /** The profiles the client holds, newest list after every change. */
  profiles: Signal<CalibrationProfile[]>;
  /** Validates and saves (replacing one with the same id); throws the client's error naming the field. */
  save(profile: unknown): CalibrationProfile;
  remove(id: string): boolean;
  /** Re-reads the client's list (a profile saved through `window.jev.calibration` directly). */
  refresh(): void;
}

function readStored(): unknown[] {
  try {
    const raw = localStorage.getItem(PROFILES_KEY);
    const parsed: unknown = raw === null ? [] : JSON.parse(raw);
    return Array.isArray(parsed) ? parsed : [];
  } catch {
    return []; // storage disabled, or not JSON: start with none
  }
}

function persist(profiles: readonly CalibrationProfile[]) {
  try {
    localStorage.setItem(PROFILES_KEY, JSON.stringify(profiles));
  } catch {
    // Quota or privacy mode: the profiles last as long as the page.
  }
}

/** Restores the stored profiles into the client (skipping any it refuses) and keeps both in step. */
export function createSavedProfiles(client: JevClient): SavedProfiles {
  const calibration = client.calibration;
  for (const stored of readStored()) {
    try {
      calibration.save(stored);
    } catch (e) {
      console.warn('A stored calibration profile was refused and skipped:', e);
    }
  }
  const profiles = signal<CalibrationProfile[]>(calibration.list());
  const changed = () => {
    profiles.value = calibration.list();
    persist(profiles.value);
  };
  changed();
  return {
    profiles,
    save(profile) {
      const saved = calibration.save(profile);
      changed();
      return saved;
    },
    remove(id) {
      const removed = calibration.delete(id);
      changed();
      return removed;
    },
    refresh() {
      const now = calibration.list();
      if (JSON.stringify(now.map((p) => p.id)) !== JSON.stringify(profiles.value.map((p) => p.id))) changed();
    },
  };
}
