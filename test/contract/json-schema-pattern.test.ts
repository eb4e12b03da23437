import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { enforceablePattern, limits } from '../../src/contract/index.ts';

const rewrite = (p: string) => {
  const r = enforceablePattern(p);
  if (!r.ok) throw new Error(`refused ${p}: ${r.reason}`);
  return r.pattern;
};
const refused = (p: string) => {
  const r = enforceablePattern(p);
  expect(r.ok, p).toBe(false);
  return r.ok ? '' : r.reason;
};

describe('enforceablePattern', () => {
  it('anchors the whole pattern once, dropping ^ and $ at the ends of top-level alternatives', () => {
    expect(rewrite('^[a-z]+$')).toBe('^(?:[a-z]+)$');
    expect(rewrite('[a-z]')).toBe('^(?:[a-z])$');
    expect(rewrite('^ab$|^cd$')).toBe('^(?:ab|cd)$');
    expect(rewrite('^(?:ab|cd)$')).toBe('^(?:(?:ab|cd))$');
    expect(rewrite('^(?<year>\\d{4})-(\\d\\d)$')).toBe('^(?:(?:[0-9]{4})-(?:[0-9][0-9]))$');
    expect(rewrite('')).toBe('^(?:)$');
  });

  it('narrows every class to the printable ASCII a raw JSON string holds, plus non-ASCII characters named one by one', () => {
    expect(rewrite('^.$')).toBe('^(?:[ !#-\\[\\]-~])$');
    expect(rewrite('^[^a]$')).toBe('^(?:[ !#-\\[\\]-`b-~])$');
    expect(rewrite('^\\S$')).toBe('^(?:[!#-\\[\\]-~])$');
    expect(rewrite('^\\s$')).toBe('^(?: )$');
    expect(rewrite('^\\w+$')).toBe('^(?:[0-9A-Z_a-z]+)$');
    expect(rewrite('^[éè]$')).toBe('^(?:[èé])$');
    expect(rewrite('^é+$')).toBe('^(?:é+)$');
    expect(rewrite('^[a-zà-ÿ]$')).toBe('^(?:[a-z])$'); // the non-ASCII range is dropped
    expect(rewrite('^[ -~]$')).toBe('^(?:[ !#-\\[\\]-~])$');
    expect(rewrite('^\\.\\$\\(\\)$')).toBe('^(?:\\.\\$\\(\\))$');
    expect(rewrite('^a*?b+?c??d{2,3}?$')).toBe('^(?:a*b+c?d{2,3})$');
  });

  it('refuses what the grammar engine cannot enforce, saying why', () => {
    expect(refused('^"$')).toMatch(/escaped/);
    expect(refused('^\\\\$')).toMatch(/escaped/);
    expect(refused('^\\n$')).toMatch(/escaped/);
    expect(refused('^[à-ÿ]$')).toMatch(/non-ASCII/);
    expect(refused('\\bfoo')).toMatch(/word boundar/);
    expect(refused('(?=a)a')).toMatch(/lookahead/);
    expect(refused('(?<!a)b')).toMatch(/lookbehind/);
    expect(refused('(a)\\1')).toMatch(/backreference/);
    expect(refused('(?<n>a)\\k<n>')).toMatch(/backreference/);
    expect(refused('\\p{L}')).toMatch(/Unicode property/);
    expect(refused('a^b')).toMatch(/"\^"/);
    expect(refused('a$b')).toMatch(/"\$"/);
    expect(refused('(^a)')).toMatch(/"\^"/);
    expect(refused(`a{${limits.maxPatternRepeat + 1}}`)).toMatch(/at most 256/);
    expect(refused('[')).toMatch(/not a valid regular expression/);
    expect(refused('a{,2}')).toMatch(/not a valid regular expression|\{0,n\}/);
  });

  it('every string the rewritten pattern matches whole, the original matches (fast-check)', () => {
    const patterns = ['^[a-z]+$', '[a-z]', '^.{1,4}$', '^\\S+@\\S+$', '^[^a]b$', '^a|b$', '\\d+', '^\\W\\w$', '^(?:ab|c)+$', '^[a-c]?x*$', '^[^"\\\\]*$'];
    for (const p of patterns) {
      const original = new RegExp(p, 'u');
      const enforced = new RegExp(rewrite(p), 'u');
      fc.assert(
        fc.property(fc.string({ unit: fc.constantFrom(...'abcxyz019 @"\\\n\té!-'.split('')), maxLength: 6 }), (s) => {
          if (enforced.test(s)) {
            expect(original.test(s), `${p} on ${JSON.stringify(s)}`).toBe(true);
            expect(/["\\\u0000-\u001f]/.test(s)).toBe(false);
          }
        }),
        { numRuns: 400 },
      );
    }
  });
});
