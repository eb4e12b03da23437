/**
 * The `format` values the engine enforces, as patterns of its own (ASCII only, anchored): each
 * accepts a subset of what the format allows, and every string it accepts is one ajv-formats'
 * full formats accept (test/engine/grammar-formats.test.ts samples them). xgrammar 0.1.27's own
 * grammars for these formats let through what a validator refuses (Feb 30, minute 60, IPv4
 * octets with leading zeros, dotless e-mail domains, host labels over 63 characters). Since the
 * schema compiler writes the grammar itself (json-schema/), every string format is one of these
 * patterns; `password` and `binary` constrain nothing (empty here).
 */
import type { StringFormat } from '../../contract/index.ts';

const DIGIT = '[0-9]';
const YEAR = `${DIGIT}{4}`;
/** A calendar date: 29 February only in leap years (divisible by 4, centuries by 400). */
const DATE = [
  `${YEAR}-(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])`,
  `${YEAR}-(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)`,
  `${YEAR}-02-(?:0[1-9]|1[0-9]|2[0-8])`,
  `(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29`,
].map((d) => `(?:${d})`).join('|');
/** RFC 3339 full-time with its offset (no leap second). */
const TIME = '(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]{1,9})?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])';
/**
 * Host names are written in lower case, the form DNS compares them in (RFC 4343: a name in any case
 * is the same name, so no host is lost), which halves the classes the grammar's automata run on:
 * zod's `.email()` (its pattern beside `format: email`) compiled in 240 ms against 469 ms with
 * mixed-case labels and apostrophes anywhere (docs/structured-output.md, "Compile time").
 *
 * A host name's label: at most 22 characters here (63 allowed), and at most four labels: a label's
 * bound is a copy per character in the grammar (`{0,61}` took 3 s to compile for a 150,000-token
 * vocabulary, `{0,20}` a tenth of that).
 */
const LABEL = '[a-z0-9](?:[a-z0-9-]{0,20}[a-z0-9])?';
const HOSTNAME = `${LABEL}(?:\\.${LABEL}){0,3}`;
/**
 * A domain's label in an e-mail address or a URI, whose length validators do not bound: hyphens
 * inside, at most two together (`xn--` of an internationalized name), which zod's `.email()`
 * compiles in 241 ms against 331 ms with hyphen runs of any length.
 */
const FREE_LABEL = '[a-z0-9]+(?:--?[a-z0-9]+)*';
const DOMAIN = `${FREE_LABEL}(?:\\.${FREE_LABEL})*`;
/**
 * An e-mail address's atom: an apostrophe only between other characters (O'Brien), never first or
 * last, which is also what common validators' patterns ask (zod's: no apostrophe before the `@`);
 * their intersection stays two automaton states instead of four.
 */
const ATEXT = '[a-zA-Z0-9!#$%&*+/=?^_`{|}~-]+';
const ATOM = `${ATEXT}(?:'${ATEXT})*`;
const EMAIL = `${ATOM}(?:\\.${ATOM})*@${FREE_LABEL}(?:\\.${FREE_LABEL})+`;
const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
const HEX = '[0-9a-fA-F]';
const PCHAR = "(?:[a-zA-Z0-9._~!$&'()*+,;=:@-]|%[0-9a-fA-F]{2})";
/** scheme://host[:port][/path][?query][#fragment] */
const URI = `[a-zA-Z][a-zA-Z0-9+.-]*://${DOMAIN}(?::[0-9]{1,5})?(?:/${PCHAR}*)*(?:\\?(?:${PCHAR}|[/?])*)?(?:#(?:${PCHAR}|[/?])*)?`;

const H16 = `${HEX}{1,4}`;
/** An ISO 8601 duration: date part, time part, both, or weeks. */
const DUR_TIME = 'T(?:[0-9]+H(?:[0-9]+M)?(?:[0-9]+S)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S)';
const DUR_DATE = '(?:[0-9]+Y(?:[0-9]+M)?(?:[0-9]+D)?|[0-9]+M(?:[0-9]+D)?|[0-9]+D)';
const POINTER = '(?:/(?:[^~/]|~[01])*)*';

/** Each string format's pattern (the number formats, int32 and int64, are bounds: json-schema/flat.ts). */
export const FORMAT_PATTERNS: Record<StringFormat, string> = {
  date: `^(?:${DATE})$`,
  time: `^${TIME}$`,
  'date-time': `^(?:${DATE})T${TIME}$`,
  duration: `^P(?:${DUR_DATE}(?:${DUR_TIME})?|${DUR_TIME}|[0-9]+W)$`,
  email: `^${EMAIL}$`,
  hostname: `^${HOSTNAME}$`,
  ipv4: `^${OCTET}(?:\\.${OCTET}){3}$`,
  /** The full form, eight groups (no "::"): a subset. */
  ipv6: `^${H16}(?::${H16}){7}$`,
  uri: `^${URI}$`,
  /** An absolute URI (every URI is a URI reference): a subset. */
  'uri-reference': `^${URI}$`,
  uuid: `^${HEX}{8}-${HEX}{4}-${HEX}{4}-${HEX}{4}-${HEX}{12}$`,
  'json-pointer': `^${POINTER}$`,
  'relative-json-pointer': `^(?:0|[1-9][0-9]*)(?:#|${POINTER})$`,
  byte: '^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$',
  password: '',
  binary: '',
};
