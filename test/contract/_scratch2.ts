import { z } from 'zod';
const s = z.object({ a: z.custom<string>().transform((v) => v ?? 'd') });
console.log(JSON.stringify(s.safeParse({}).error?.issues ?? s.safeParse({}).data));
const s2 = z.object({ a: z.custom<string>().optional().transform((v) => v ?? 'd') });
console.log(JSON.stringify(s2.safeParse({}).error?.issues ?? s2.safeParse({}).data));
const s3 = z.object({ a: z.custom<string>().superRefine((v, ctx) => { if (v === undefined) ctx.addIssue({code:'custom', message: 'req'}); }) });
console.log(JSON.stringify(s3.safeParse({}).error?.issues ?? s3.safeParse({}).data));
