import { z } from 'zod';

// Validate without compiling parsers through `new Function`: the engine runs under a strict
// Content-Security-Policy (no 'unsafe-eval'), and zod's eval probe alone would report a violation.
// Every file that builds a schema imports this module first.
z.config({ jitless: true });
