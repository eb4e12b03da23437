// Entry of the verdict worker (verdict-pool.ts): a worker_threads Worker that answers
// `{ id, schema }` with `{ id, verdict }` (schema-verdict.ts), so that a schema whose lowering
// runs long can be stopped by terminating the worker.
import { parentPort } from 'node:worker_threads';
import { schemaVerdict } from './schema-verdict.ts';

const port = parentPort!;
port.on('message', ({ id, schema }: { id: number; schema: unknown }) => port.postMessage({ id, verdict: schemaVerdict(schema) }));
