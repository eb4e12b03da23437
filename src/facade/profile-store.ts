/**
 * The client's calibration profiles (`client.calibration`): saved in the page's memory, so they
 * outlive a restart of the engine's worker, and resolved here, where every decision request
 * enters the client (the facade, `client.fetch`, the service worker's relay), so that a request
 * may name a saved profile by id (`calibration: "<id>"`, `prediction_set.profile: "<id>"`) and the
 * engine receives the profile itself.
 */
import { JevError, calibrationProfileSchema, isPlainObject, parseWith, profileMessages, type CalibrationProfile } from '../contract/index.ts';
import type { CalibrationStore } from './jev-client.ts';

export class ProfileStore implements CalibrationStore {
  readonly #profiles = new Map<string, CalibrationProfile>();

  /** Validates and saves a profile (replacing one with the same id); throws JevError `invalid_request` naming the field. */
  save(profile: unknown): CalibrationProfile {
    const parsed = parseWith(calibrationProfileSchema, profile);
    this.#profiles.set(parsed.id, parsed);
    return structuredClone(parsed);
  }

  get(id: string): CalibrationProfile | null {
    const found = this.#profiles.get(id);
    return found === undefined ? null : structuredClone(found);
  }

  /** The saved profiles, in the order they were first saved. */
  list(): CalibrationProfile[] {
    return [...this.#profiles.values()].map((p) => structuredClone(p));
  }

  delete(id: string): boolean {
    return this.#profiles.delete(id);
  }

  /** The store as the client exposes it: its four methods, bound (they may be passed around), without `resolve`. */
  view(): CalibrationStore {
    return {
      save: (profile) => this.save(profile),
      get: (id) => this.get(id),
      list: () => this.list(),
      delete: (id) => this.delete(id),
    };
  }

  /**
   * A decision request body with its profile ids replaced by the saved profiles (a new object;
   * the caller's is untouched). Anything else passes as it is, for the engine to validate.
   * Throws JevError `invalid_request` (400) for an id that is not saved, listing the saved ids.
   */
  resolve(body: unknown): unknown {
    if (!isPlainObject(body)) return body;
    const calibration = body['calibration'];
    const set = body['prediction_set'];
    const setProfile = isPlainObject(set) ? set['profile'] : undefined;
    if (typeof calibration !== 'string' && typeof setProfile !== 'string') return body;
    const out: Record<string, unknown> = { ...body };
    if (typeof calibration === 'string') out['calibration'] = this.#lookup(calibration, 'calibration');
    if (typeof setProfile === 'string') out['prediction_set'] = { ...(set as object), profile: this.#lookup(setProfile, 'prediction_set.profile') };
    return out;
  }

  #lookup(id: string, param: string): CalibrationProfile {
    const found = this.#profiles.get(id);
    if (found === undefined) {
      throw new JevError('invalid_request', profileMessages.unknownId(param, id, [...this.#profiles.keys()]), {
        param,
        details: { profile: id, saved: [...this.#profiles.keys()] },
      });
    }
    return found;
  }
}
