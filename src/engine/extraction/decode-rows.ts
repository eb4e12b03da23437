/**
 * An extraction's fields decoded side by side: each field's prompt and `null` path are its own
 * passes (decode-field.ts), and then the values of up to `ROWS_MAX` fields advance together, one
 * batched pass a step with a row per field still open (model/kv-rows.ts), instead of a pass per
 * field per step. A decode pass reads every weight for one token, so a batch of rows costs little
 * more than one row: on the 135M-shaped model that is what lets F fields cost close to their
 * token count (docs/extraction.md, Cost).
 *
 * Each row computes what its field alone would (the rows' gaps are masked position by position),
 * so the answers do not depend on which other fields are asked, up to the last bits of a batched
 * matrix product (checked within 1e-5 in test/engine/extraction-rows.test.ts). Where the model
 * cannot (`LanguageModel.rowsExact`: a fused attention that reads a count of positions, caches on
 * the GPU) every field decodes alone, as before.
 */
import { LanguageModel } from '../model/language-model.ts';
import type { KvCache } from '../model/kv-cache.ts';
import { selectRows, stackRows, type CacheRows } from '../model/kv-rows.ts';
import type { ByteAutomaton } from './byte-automaton.ts';
import { decodeAlone, decodedField, openField, type DecodedField, type OpenField } from './decode-field.ts';
import type { FieldPlan } from './field-plan.ts';
import type { TokenBytes } from './token-bytes.ts';

/** The most fields decoded in one batch. */
export const ROWS_MAX = 8;
/** The most bytes of the fields' caches one batch stacks: while it is stacked both copies are held (the fields' caches are disposed as soon as the batch is made), so a batch costs at most twice this beyond decoding one field at a time. */
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
  const out: DecodedField[] = [];
  const opens: OpenField[] = [];
  try {
    let group: OpenField[] = [];
    let bytes = 0;
    const flush = async () => {
      await decodeGroup(lm, group, signal);
      for (const o of group) {
        out.push(decodedField(table, o));
        o.cache.dispose();
      }
      group = [];
      bytes = 0;
    };
    for (const job of jobs) {
      signal?.throwIfAborted();
      const open = await openField(lm, table, stateCache, stateTokens, job.plan, job.machine, job.maxSteps, signal);
      opens.push(open);
      if (!batched) {
        await decodeAlone(lm, open, signal);
        out.push(decodedField(table, open));
        open.cache.dispose();
        continue;
      }
      group.push(open);
      bytes += open.cache.bytes;
      if (group.length >= ROWS_MAX || bytes >= ROWS_MAX_BYTES) await flush();
    }
    if (group.length > 0) await flush();
    return out;
  } finally {
    for (const o of opens) o.cache.dispose();
  }
}

/** Runs the group's decoders to their ends: the open ones as rows of one batched cache. */
async function decodeGroup(lm: LanguageModel, group: readonly OpenField[], signal: AbortSignal | undefined): Promise<void> {
  for (const o of group) if (o.decoder.done) o.cache.dispose(); // done at their first step: nothing to decode
  let live = group.filter((o) => !o.decoder.done);
  if (live.length === 1) return decodeAlone(lm, live[0]!, signal);
  if (live.length === 0) return;
  let rows: CacheRows | null = stackRows(live.map((o) => o.cache));
  if (!rows) {
    for (const o of live) await decodeAlone(lm, o, signal);
    return;
  }
  for (const o of live) o.cache.dispose(); // copied into the rows
  try {
    while (live.length > 0) {
      signal?.throwIfAborted();
      const pass = await lm.forwardRows(live.map((o) => o.decoder.pending!), rows);
      rows.cache.dispose();
      rows = pass.rows;
      try {
        for (const [r, o] of live.entries()) o.decoder.feed(LanguageModel.rowLogProbs(pass.logits, r));
      } finally {
        pass.logits.dispose();
      }
      const keep = live.flatMap((o, r) => (o.decoder.done ? [] : [r]));
      if (keep.length === live.length) continue;
      if (keep.length > 0) {
        const selected = selectRows(rows, keep);
        rows.cache.dispose();
        rows = selected;
      }
      live = keep.map((r) => live[r]!);
    }
  } finally {
    rows?.cache.dispose();
  }
}
