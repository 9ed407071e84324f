// `npm run test:busy [words]`: the tests on a busy machine. Two CPU-bound processes spin beside
// two runs of the tests in a row (scripts/run-tests.mjs, what `npm test` runs, with the same
// file-filter words); each run's result and time are printed, and the exit status is non-zero
// if either failed. The spinners stop when this script ends, however it ends: it kills them on
// exit and on SIGINT/SIGTERM, and each one also stops by itself once its parent is gone.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { constants } from 'node:os';

const SPINNERS = 2;
const RUNS = 2;
// Spins, and every few million turns checks that the script that started it is still its parent.
const SPIN = `const parent = ${process.pid}; for (let i = 0; ; i++) if (i % 5e6 === 0 && process.ppid !== parent) process.exit(0);`;

const spinners = Array.from({ length: SPINNERS }, () => spawn(process.execPath, ['-e', SPIN], { stdio: 'ignore' }));
const stopSpinners = () => spinners.forEach((spinner) => spinner.kill('SIGKILL'));
process.on('exit', stopSpinners);

let run;
let interrupted;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    interrupted ??= signal;
    run?.kill(signal);
  });
}

const results = [];
for (let i = 1; i <= RUNS && !interrupted; i++) {
  console.log(`test:busy: run ${i} of ${RUNS}, beside ${SPINNERS} CPU-bound processes`);
  const started = Date.now();
  run = spawn(process.execPath, ['scripts/run-tests.mjs', ...process.argv.slice(2)], { stdio: 'inherit' });
  const [code, signal] = await once(run, 'exit');
  results.push({
    passed: code === 0,
    line: `run ${i}: ${code === 0 ? 'passed' : `failed (${code ?? signal})`} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  });
}
stopSpinners();
for (const { line } of results) console.log(`test:busy: ${line}`);
if (interrupted) process.exit(128 + constants.signals[interrupted]);
process.exit(results.every((r) => r.passed) ? 0 : 1);
