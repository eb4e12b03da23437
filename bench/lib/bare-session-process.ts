// Entry of the bare session's own process (bare-session.ts, `measureBareSession`): steps the
// session alone and prints its times as one line of JSON. Wiring only.
import { stepBareSession, type BareSessionJob } from './bare-session.ts';

const job = JSON.parse(process.argv[2] ?? '{}') as BareSessionJob;
const times = await stepBareSession(job.root, job.model, job.dtype, job.threads, job.reps, job.promptTokens);
process.stdout.write(`${JSON.stringify(times)}\n`);
process.exit(0);
