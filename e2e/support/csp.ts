import { MIRROR } from './env.ts';

/** The Content-Security-Policy docs/offline.md recommends, with the model host as the only other origin. */
export const STRICT_CSP = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "worker-src 'self'",
  `connect-src 'self' ${MIRROR}`,
  "img-src 'self' data:",
  "style-src 'self'",
  "manifest-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');
