/**
 * The decision form's calibration controls: which saved profile the request applies
 * (`calibration: id`), the prediction set's alpha (`prediction_set: { alpha }`), and deleting a
 * profile. Profiles come from the evaluation section's "Save profile".
 */
import { FieldError } from '../shared/field-error.tsx';
import { formatCoverage } from '../shared/format.ts';
import { parseAlpha } from '../shared/parse-alpha.ts';
import type { SavedProfiles } from '../state/saved-profiles.ts';

interface Props {
  store: SavedProfiles;
  /** The chosen profile id, '' for none. */
  profile: string;
  alpha: string;
  onProfile(id: string): void;
  onAlpha(alpha: string): void;
  profileError?: string | undefined;
  alphaError?: string | undefined;
}

export function ProfilePicker({ store, profile, alpha, onProfile, onAlpha, profileError, alphaError }: Props) {
  const profiles = store.profiles.value;
  const chosen = profiles.find((p) => p.id === profile) ?? null;
  const parsed = parseAlpha(alpha);
  const hasConformal = chosen !== null && Object.values(chosen.questions).some((q) => q.conformal !== null);
  const remove = () => {
    if (!chosen) return;
    store.remove(chosen.id);
    onProfile('');
  };
  return (
    <fieldset class="profile-picker" data-testid="profile-picker">
      <legend>Calibration profile</legend>
      <div class="field-row">
        <div class="field">
          <label for="profile-select">Apply profile</label>
          <select
            id="profile-select"
            value={chosen ? chosen.id : ''}
            onFocus={() => store.refresh()}
            onChange={(e) => onProfile(e.currentTarget.value)}
            aria-invalid={profileError ? true : undefined}
            aria-describedby={profileError ? 'profile-error' : 'profile-hint'}
          >
            <option value="">none</option>
            {profiles.map((p) => (
              <option key={p.id} value={p.id}>
                {p.id}
              </option>
            ))}
          </select>
          <p id="profile-hint" class="hint">
            {profiles.length === 0
              ? 'None saved yet: fit one from a labelled set in the evaluation below.'
              : chosen
                ? `Fitted on ${chosen.model}${chosen.calibrate ? ' with Calibrate on' : ''}; applies to the questions it was fitted on.`
                : `${profiles.length} saved in this browser.`}
          </p>
          <FieldError id="profile-error" message={profileError} />
        </div>
        <div class="field">
          <label for="alpha-input">Prediction set α</label>
          <input
            id="alpha-input"
            type="text"
            inputMode="decimal"
            placeholder="e.g. 0.1"
            value={alpha}
            disabled={!chosen}
            onInput={(e) => onAlpha(e.currentTarget.value)}
            aria-invalid={'error' in parsed || alphaError ? true : undefined}
            aria-describedby={'error' in parsed ? 'alpha-error' : alphaError ? 'alpha-engine-error' : 'alpha-hint'}
          />
          <p id="alpha-hint" class="hint">
            {!chosen
              ? 'Needs a profile.'
              : 'error' in parsed || parsed.alpha === null
                ? 'Optional: the answers that cover the truth with probability ≥ 1 − α.'
                : hasConformal
                  ? `A ${formatCoverage(parsed.alpha)} set for each answer.`
                  : 'This profile has no held-out scores for a set.'}
          </p>
          <FieldError id="alpha-error" message={'error' in parsed ? parsed.error : null} />
          <FieldError id="alpha-engine-error" message={alphaError} />
        </div>
      </div>
      {chosen && (
        <button type="button" class="button small danger" onClick={remove}>
          Delete profile {chosen.id}
        </button>
      )}
    </fieldset>
  );
}
