/**
 * An extraction's fields decoded side by side: each field's prompt and `null` path are its own
 * passes (decode-field.ts), and then the values of up to `ROWS_MAX` fields advance together, one
 * batched pass a step with a row per field still open (model/kv-rows.ts), instead of a pass per
 * field per step. A decode pass reads every weight for one token, so a batch of rows costs little
 * more than one row: on the 135M-shaped model that is what lets F fields cost close to their
 * token count (docs/extraction.md, Cost). With more fields than a batch holds, the next ones join
 * it as its rows finish, so a long value's last steps carry other fields' rows instead of running
 * alone; a finished row is dropped in place, without a copy of the others.
 *
 * Each row computes what its field alone would (the rows' gaps are masked position by position),
 * so the answers do not depend on which other fields are asked, up to the last bits of a batched
 * matrix product (checked within 1e-5 in test/engine/extraction-rows.test.ts). Where the model
 * cannot (`LanguageModel.rowsExact`: a fused attention that reads a count of positions, caches on
 * the GPU) every field decodes alone, as before.
 */
import { LanguageModel } from '../model/language-model.ts';
import type { KvCache } from '../model/kv-cache.ts';
import { keepRows, stackRows, type CacheRows } from '../model/kv-rows.ts';
import type { ByteAutomaton } from './byte-automaton.ts';
import { decodeAlone, decodedField, openField, type DecodedField, type OpenField } from './decode-field.ts';
import type { FieldPlan } from './field-plan.ts';
import type { TokenBytes } from './token-bytes.ts';

/** The most fields decoded in one batch. */
export const ROWS_MAX = 8;
/**
 * Positions of room a batch is stacked with where the model writes each pass's keys and values in
 * place (LanguageModel.inPlaceRows: onnxruntime-node); when they are used up, the rows are stacked
 * again with as much (a copy of the rows, where a pass returning the whole cache copies it at every
 * step).
 */
export const ROWS_ROOM = 16;
/** The most bytes of the fields' caches one batch stacks (fields join it while it holds less): while it is stacked both copies are held (the fields' caches, and the rows they join, are disposed as soon as the batch is made), so a batch costs at most twice this beyond decoding one field at a time. */
export const ROWS_MAX_BYTES = 128 * 1024 * 1024;

export interface FieldJob {
  plan: FieldPlan;
  machine: ByteAutomaton<unknown>;
  maxSteps: number;
}

/** Every field decoded, in the jobs' order; batched where the model computes rows exactly. */
export async function decodeFields(
  lm: LanguageModel,
  table: TokenBytes,
  stateCache: KvCache,
  stateTokens: number,
  jobs: readonly FieldJob[],
  signal: AbortSignal | undefined,
): Promise<DecodedField[]> {
  const batched = jobs.length > 1 && (await lm.rowsExact());
  const out: DecodedField[] = new Array(jobs.length);
  const opens: OpenField[] = [];
  const open = async (i: number) => {
    signal?.throwIfAborted();
    const job = jobs[i]!;
    const o = await openField(lm, table, stateCache, stateTokens, job.plan, job.machine, job.maxSteps, signal);
    opens.push(o);
    return o;
  };
  const finish = (i: number, o: OpenField) => {
    out[i] = decodedField(table, o);
    o.cache.dispose();
  };
  try {
    if (!batched) {
      for (let i = 0; i < jobs.length; i++) {
        const o = await open(i);
        await decodeAlone(lm, o, signal);
        finish(i, o);
      }
      return out;
    }
    await decodeJoining(lm, jobs.length, open, finish, signal);
    return out;
  } finally {
    for (const o of opens) o.cache.dispose();
  }
}

/**
 * The batched decoding: fields are opened (their prompt passes) while the batch has room, and
 * join it as rows (model/kv-rows.ts `stackRows` onto the rows decoding); each step is one pass for
 * every open row; a finished row is dropped in place (`keepRows`). Fields are let in whenever at
 * most half the batch is left (or none), so a long value's last steps carry the next fields' rows
 * instead of running alone, and each join (a copy of every row) is shared by several fields. A
 * field that ends at its first step never joins, and a last field left alone, with nothing to
 * join, decodes over its own cache as `decodeAlone` does.
 */
async function decodeJoining(
  lm: LanguageModel,
  count: number,
  open: (i: number) => Promise<OpenField>,
  finish: (i: number, o: OpenField) => void,
  signal: AbortSignal | undefined,
): Promise<void> {
  let next = 0;
  let live: { i: number; o: OpenField }[] = [];
  let rows: CacheRows | null = null;
  const room = lm.inPlaceRows ? ROWS_ROOM : 0;
  try {
    for (;;) {
      if (live.length <= ROWS_MAX / 2 && next < count) {
        const joining: { i: number; o: OpenField }[] = [];
        let bytes = rows?.cache.bytes ?? 0;
        while (next < count && live.length + joining.length < ROWS_MAX && bytes < ROWS_MAX_BYTES) {
          const i = next++;
          const o = await open(i);
          if (o.decoder.done) finish(i, o); // done at its first step: nothing to decode
          else {
            joining.push({ i, o });
            bytes += o.cache.bytes;
          }
        }
        if (joining.length === 1 && !rows && next >= count) {
          const { i, o } = joining[0]!;
          await decodeAlone(lm, o, signal);
          finish(i, o);
          return;
        }
        if (joining.length > 0) {
          const joined = stackRows(joining.map((j) => j.o.cache), rows, room);
          if (!joined) {
            // Caches outside CPU memory. Not reached: rows are decoded only where `rowsExact` said
            // yes, which it says only for caches in CPU memory. A guard: these fields are decoded
            // one by one, and rows already decoding, if any, go on as they are.
            for (const { i, o } of joining) {
              await decodeAlone(lm, o, signal);
              finish(i, o);
            }
            continue;
          }
          rows?.cache.dispose();
          rows = joined;
          for (const j of joining) j.o.cache.dispose(); // copied into the rows
          live = [...live, ...joining];
        }
      }
      if (live.length === 0 || !rows) {
        if (next >= count) return;
        continue;
      }
      signal?.throwIfAborted();
      if (room > 0 && rows.used === rows.cache.length) {
        // The room is used up: the same rows, stacked again with room.
        const roomier = stackRows([], rows, room);
        if (roomier) {
          rows.cache.dispose();
          rows = roomier;
        }
      }
      const pass = await lm.forwardRows(live.map((l) => l.o.decoder.pending!), rows);
      if (pass.rows.cache !== rows.cache) rows.cache.dispose(); // else written in place
      rows = pass.rows;
      try {
        for (const [r, l] of live.entries()) l.o.decoder.feed(LanguageModel.rowLogProbRow(pass.logits, r));
      } finally {
        pass.logits.dispose();
      }
      const keep = live.flatMap((l, r) => (l.o.decoder.done ? [] : [r]));
      if (keep.length === live.length) continue;
      for (const l of live) if (l.o.decoder.done) finish(l.i, l.o);
      if (keep.length > 0) rows = keepRows(rows, keep);
      else {
        rows.cache.dispose();
        rows = null;
      }
      live = keep.map((r) => live[r]!);
    }
  } finally {
    rows?.cache.dispose();
  }
}
