/**
 * Import rules for src/, bench/ and scripts/ (`npm run lint:deps`, run by `npm test` after the
 * typecheck). Type-only imports count: a layer or room that needs another's types depends on it.
 *
 * 1. Layers, lowest first: a layer imports only layers on a lower level (`src/ui/` and the
 *    library entry `src/index.ts` are peers at the top: neither imports the other).
 * 2. The engine's rooms (src/engine/README.md), lowest first: a room imports only rooms on a lower
 *    level, never `engine.ts` or `worker-host.ts`, which sit above every room.
 * 3. The playground's rooms (src/ui/README.md), lowest first: a room imports only rooms on a lower
 *    level (so a panel never imports another panel), never the entry files at src/ui/'s top
 *    (`main.tsx`, `app.tsx`), which sit above every room; src/ui/ has no folder outside the list.
 * 4. src/ never imports bench/, scripts/, test/ or e2e/.
 * 5. No circular imports in src/, bench/ or scripts/.
 */

/** [name, path pattern, level] */
const LAYERS = [
  ['contract', '^src/contract/', 0],
  ['protocol', '^src/protocol/', 1],
  ['engine', '^src/engine/', 2],
  ['evaluation', '^src/evaluation/', 3],
  ['facade', '^src/facade/', 4],
  ['http', '^src/http/', 5],
  // Wiring of a client with its HTTP surface: createClient, createLocalClient, serveHttp.
  ['client', '^src/client/', 6],
  ['ui', '^src/ui/', 7],
  ['index', '^src/index\\.ts$', 7],
  // The AI SDK provider (`jev-local/ai-sdk`), over a client's methods: a peer of the library entry.
  ['ai-sdk', '^src/ai-sdk/', 7],
  // The Node server, its engine in-process or in front of SGLang or vLLM (docs/server.md): a peer of ui/ and the library
  // entry, so that neither they nor any lower layer imports it; only its bin entry (bin/) does.
  ['server', '^src/server/', 7],
];

/** [room, level] inside src/engine/; engine.ts and worker-host.ts are above them all. */
const ROOMS = [
  ['runtime', 0],
  ['graph', 1],
  ['model', 1],
  ['load', 2],
  ['grammar', 2],
  ['decision', 2],
  ['chat', 3],
  // Extraction reads decision/'s prompt frame and state memo, grammar/'s vocabulary and chat/'s stop tokens.
  ['extraction', 4],
];

/** [room, level] inside src/ui/: shared state, shared widgets, then the panels, each a peer of the others. */
const UI_ROOMS = [
  ['state', 0],
  ['shared', 1],
  ['decisions', 2],
  ['chat', 2],
  ['evaluation', 2],
  ['model', 2],
  ['extract', 2],
];

function layerRules() {
  const rules = [];
  for (const [name, path, level] of LAYERS) {
    const above = LAYERS.filter(([other, , otherLevel]) => other !== name && otherLevel >= level);
    for (const [other, otherPath, otherLevel] of above) {
      rules.push({
        name: `layer-${name}-not-${other}`,
        comment: `${name} (level ${level}) may not import ${other} (level ${otherLevel}): a layer imports only layers below it`,
        severity: 'error',
        from: { path },
        to: { path: otherPath },
      });
    }
  }
  return rules;
}

function roomRules() {
  const rules = [];
  for (const [room, level] of ROOMS) {
    const above = ROOMS.filter(([other, otherLevel]) => other !== room && otherLevel >= level).map(([other]) => other);
    rules.push({
      name: `room-${room}`,
      comment: `src/engine/${room}/ (level ${level}) imports only rooms on a lower level; not ${above.join(', ') || 'any room'}, nor the engine's top files`,
      severity: 'error',
      from: { path: `^src/engine/${room}/` },
      to: { path: above.length ? `^src/engine/(${above.join('|')}/|[^/]+$)` : '^src/engine/[^/]+$' },
    });
  }
  return rules;
}

function uiRoomRules() {
  const rules = [];
  for (const [room, level] of UI_ROOMS) {
    const above = UI_ROOMS.filter(([other, otherLevel]) => other !== room && otherLevel >= level).map(([other]) => other);
    rules.push({
      name: `ui-room-${room}`,
      comment: `src/ui/${room}/ (level ${level}) imports only rooms on a lower level; not ${above.join(', ') || 'any room'}, nor the playground's entry files`,
      severity: 'error',
      from: { path: `^src/ui/${room}/` },
      to: { path: above.length ? `^src/ui/(${above.join('|')}/|[^/]+$)` : '^src/ui/[^/]+$' },
    });
  }
  rules.push({
    name: 'ui-room-listed',
    comment: 'a folder of src/ui/ is a room listed in UI_ROOMS (with its level), so that the rules above cover it',
    severity: 'error',
    from: { path: '^src/ui/' },
    to: { path: '^src/ui/[^/]+/', pathNot: `^src/ui/(${UI_ROOMS.map(([room]) => room).join('|')})/` },
  });
  return rules;
}

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...layerRules(),
    ...roomRules(),
    ...uiRoomRules(),
    {
      name: 'server-not-evaluation',
      comment: 'src/server/ serves the HTTP surface over contract, protocol, engine, facade, http and client; the evaluation is not its business',
      severity: 'error',
      from: { path: '^src/server/' },
      to: { path: '^src/evaluation/' },
    },
    {
      name: 'src-not-tooling',
      comment: 'src/ is the product: it never imports the bench, scripts or tests',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(bench|scripts|test|e2e)/' },
    },
    {
      name: 'no-circular',
      comment: 'no import cycles in src/, bench/ or scripts/',
      severity: 'error',
      from: { path: '^(src|bench|scripts)/' },
      to: { circular: true },
    },
    // The tools, one direction (docs/architecture.md, "Where a change goes"): the bench imports
    // scripts/ (the test models, scripts/machine/'s process memory, machine facts and Chromium),
    // never the reverse; e2e reads the model roots through e2e/support/env.ts, which imports
    // scripts/, so nothing in scripts/ may reach that module, not even through another.
    {
      name: 'tools-scripts-not-bench',
      comment: 'scripts/ never imports bench/: what both need (process memory, machine facts, Chromium) lives in scripts/machine/',
      severity: 'error',
      from: { path: '^scripts/' },
      to: { path: '^bench/' },
    },
    {
      name: 'tools-scripts-not-e2e-env',
      comment: 'nothing in scripts/ reaches e2e/support/env.ts (it reads scripts/models/roots.ts): take ports from e2e/support/ports.ts, Chromium from scripts/machine/chromium.ts',
      severity: 'error',
      from: { path: '^scripts/' },
      to: { path: '^e2e/support/env\\.ts$', reachable: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // dist/, dist-*/ (bench/dist, bench/peers/dist, a run's own JEV_BENCH_DIST): built pages, not source
    exclude: { path: ['(^|/)dist/', '(^|/)dist-[a-z0-9]+/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js', '.mjs'] },
  },
};
