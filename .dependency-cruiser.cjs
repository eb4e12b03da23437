/**
 * Import rules for src/ (`npm run lint:deps`, run by `npm test` after the typecheck). Type-only
 * imports count: a layer or room that needs another's types depends on it.
 *
 * 1. Layers, lowest first: a layer imports only layers on a lower level (`src/ui/` and the
 *    library entry `src/index.ts` are peers at the top: neither imports the other).
 * 2. The engine's rooms (src/engine/README.md), lowest first: a room imports only rooms on a lower
 *    level, never `engine.ts` or `worker-host.ts`, which sit above every room.
 * 3. src/ never imports bench/, scripts/, test/ or e2e/.
 * 4. No circular imports in src/.
 */

/** [name, path pattern, level] */
const LAYERS = [
  ['contract', '^src/contract/', 0],
  ['protocol', '^src/protocol/', 1],
  ['engine', '^src/engine/', 2],
  ['evaluation', '^src/evaluation/', 3],
  ['facade', '^src/facade/', 4],
  ['http', '^src/http/', 5],
  ['ui', '^src/ui/', 6],
  ['index', '^src/index\\.ts$', 6],
];

/**
 * Imports against the layer order that were there when the rule came (issue 31), listed here
 * rather than allowed wholesale: facade/ builds `client.fetch` and the page relay from http/,
 * while http/ needs only facade/'s `JevClient` type. Any other facade → http import fails.
 */
const KNOWN_LAYER_EXCEPTIONS = [
  ['src/facade/engine-client.ts', 'src/http/http-handler.ts'],
  ['src/facade/engine-client.ts', 'src/http/fetch-function.ts'],
  ['src/facade/local-client.ts', 'src/http/http-handler.ts'],
  ['src/facade/serve-http.ts', 'src/http/page-relay.ts'],
];

/** [room, level] inside src/engine/; engine.ts and worker-host.ts are above them all. */
const ROOMS = [
  ['runtime', 0],
  ['graph', 1],
  ['model', 1],
  ['load', 2],
  ['chat', 2],
  ['decision', 2],
];

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const anyOf = (paths) => `^(${paths.map(escape).join('|')})$`;

function layerRules() {
  const rules = [];
  for (const [name, path, level] of LAYERS) {
    for (const [other, otherPath, otherLevel] of LAYERS) {
      if (other === name || otherLevel < level) continue;
      const exceptions = KNOWN_LAYER_EXCEPTIONS.filter(([from, to]) => from.match(path) && to.match(otherPath));
      const rule = {
        name: `layer-${name}-not-${other}`,
        comment: `${name} (level ${level}) may not import ${other} (level ${otherLevel}): a layer imports only layers below it`,
        severity: 'error',
        from: { path },
        to: { path: otherPath },
      };
      if (exceptions.length === 0) {
        rules.push(rule);
        continue;
      }
      const exempt = [...new Set(exceptions.map(([from]) => from))];
      rules.push({ ...rule, from: { path, pathNot: anyOf(exempt) } });
      for (const from of exempt) {
        const allowed = exceptions.filter(([f]) => f === from).map(([, to]) => to);
        rules.push({ ...rule, name: `${rule.name} (${from})`, from: { path: anyOf([from]) }, to: { path: otherPath, pathNot: anyOf(allowed) } });
      }
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

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...layerRules(),
    ...roomRules(),
    {
      name: 'src-not-tooling',
      comment: 'src/ is the product: it never imports the bench, scripts or tests',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(bench|scripts|test|e2e)/' },
    },
    {
      name: 'no-circular',
      comment: 'no import cycles in src/',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js', '.mjs'] },
  },
};
