import { machineDescription, commitId, browserVersion } from '/work/main/bench/lib/machine.ts';
console.log(machineDescription(), commitId('/work/main'), browserVersion('/usr/bin/chromium'));
