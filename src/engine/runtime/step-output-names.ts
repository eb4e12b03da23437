/**
 * The names of the outputs a pass adds to the cache with (engine/graph/step-outputs.ts writes them
 * into a graph; model/language-model.ts fetches them to write a batch's rows in place).
 */
export const STEP_PREFIX = 'jev_step/';

/** The output holding what a pass adds to the cache output `present` (`present.L.key` or `.value`). */
export const stepOutputName = (present: string) => `${STEP_PREFIX}${present}`;
