// The pinned onnxruntime-web patch (build/ort-patch.mjs): the installed bundle is patched (this
// fails if `npm ci` did not apply it, or onnxruntime-web changed under it), and the patch itself
// replaces exactly what it names, refusing a file that lacks any of it. What the patched code does
// is checked in Chromium by e2e/ort-patch.spec.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs build script, without types
import { FILE, installed, MARKER, patch, REPLACEMENTS, VERSION } from '../../build/ort-patch.mjs';

type Replacement = [string, string, number];
const count = (text: string, part: string) => text.split(part).length - 1;

describe('the onnxruntime-web patch', () => {
  it(`is applied to the installed ${FILE} (onnxruntime-web ${VERSION})`, () => {
    const { dist, version } = installed() as { dist: string; version: string };
    expect(version).toBe(VERSION);
    const text = readFileSync(join(dist, FILE), 'utf8');
    expect(text).toContain(MARKER);
    for (const [from, to] of REPLACEMENTS as Replacement[]) {
      expect(text).toContain(to);
      // The original survives only inside its replacement (the copying fallback).
      expect(count(text, from)).toBe(count(to, from) * count(text, to));
    }
    expect(patch(text)).toBe(text); // idempotent
  });

  it('replaces each original exactly as often as pinned, and refuses a file that lacks one', () => {
    const originals = (REPLACEMENTS as Replacement[]).flatMap(([from, , times]) => Array.from({ length: times }, () => from));
    const pristine = `head;${originals.join(';middle;')};tail`;
    const patched = patch(pristine) as string;
    expect(patched.startsWith('head;')).toBe(true);
    expect(patched.endsWith(';tail')).toBe(true);
    for (const [, to, times] of REPLACEMENTS as Replacement[]) expect(patched.split(to).length - 1).toBe(times);
    expect(patched).toContain(MARKER);
    const missing = pristine.replace((REPLACEMENTS as Replacement[])[1]![0], 'something else');
    expect(() => patch(missing)).toThrow(/expected 1 occurrence\(s\) of .* found 0: onnxruntime-web is not/);
  });
});
