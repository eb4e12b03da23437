#!/usr/bin/env node
/**
 * `npm test`: the phases of the test run, one after another, each timed, with where the time
 * went printed at the end (and on the first failure, which stops the run with its exit code):
 * the test models, the typecheck, the import rules, the unit and integration tests (vitest),
 * the build, and the browser tests (Playwright). Plain Node, no transpiler: it starts at once.
 */
import { spawnSync } from 'node:child_process';

const PHASES = [
  ['models', 'npm', ['run', 'models', '--', '--only', 'tiny,families']],
  ['typecheck', 'npm', ['run', 'typecheck']],
  ['import rules', 'npm', ['run', 'lint:deps']],
  ['vitest', 'npx', ['vitest', 'run']],
  ['build', 'npm', ['run', 'build']],
  ['playwright', 'npx', ['playwright', 'test']],
];

const times = [];
const report = (failed) => {
  const total = times.reduce((s, [, t]) => s + t, 0);
  const lines = times.map(([name, t]) => `  ${name.padEnd(13)} ${t.toFixed(0).padStart(5)} s  ${((100 * t) / Math.max(total, 1e-9)).toFixed(0).padStart(3)} %`);
  console.log(`\nnpm test: where the time went${failed ? ` (stopped: ${failed} failed)` : ''}\n${lines.join('\n')}\n  ${'total'.padEnd(13)} ${total.toFixed(0).padStart(5)} s`);
};

for (const [name, command, args] of PHASES) {
  const start = performance.now();
  const run = spawnSync(command, args, { stdio: 'inherit' });
  times.push([name, (performance.now() - start) / 1000]);
  const code = run.status ?? 1;
  if (code !== 0 || run.error) {
    report(name);
    process.exit(code || 1);
  }
}
report(null);
