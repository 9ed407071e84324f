/**
 * `npm run bench`: every benchmark, one after the other, each in its own process, then the
 * PASS/FAIL lines of all of them together.
 *
 *   node --import tsx bench/run-all.ts [--only name,name] [--out file]
 *
 * `--out` also writes the whole output to a file (e.g. to update bench/RESULTS.md from it).
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { ROOT } from './lib/report.js';

const BENCHMARKS = [
  'long-history',
  'command-latency',
  'command-throughput',
  'streaming',
  'scale',
  'long-conversations',
  'compaction',
  'startup',
  'durability',
  'task-scope-timing',
  'tool-call-overhead',
  'push',
  'push-idle',
  'observability',
  'conform',
  'scrapers',
  'overload',
  'http-servers',
  // These four need PostgreSQL (TINY_HARNESS_BENCH_DATABASE_URL); without it each says SKIPPED.
  'postgres-vs-sqlite',
  'round-trips',
  'cross-instance',
  'cross-instance-scale',
];

const { values: flags } = parseArgs({ options: { only: { type: 'string' }, out: { type: 'string' } } });
const chosen = flags.only ? flags.only.split(',') : BENCHMARKS;
for (const name of chosen)
  if (!BENCHMARKS.includes(name)) throw new Error(`no benchmark ${name}; there are ${BENCHMARKS.join(', ')}`);

let output = '';
const write = (text: string) => {
  process.stdout.write(text);
  output += text;
};

function run(name: string): Promise<{ code: number; seconds: number }> {
  const start = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', `bench/${name}.ts`], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.setEncoding('utf8').on('data', write);
    child.stderr.setEncoding('utf8').on('data', write);
    child.on('exit', (code) => resolve({ code: code ?? 1, seconds: (performance.now() - start) / 1000 }));
  });
}

const started = performance.now();
write(
  `npm run bench: ${chosen.join(', ')}; ${os.cpus().length} cores, load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}\n\n`,
);
const times: string[] = [];
let failed = 0;
for (const name of chosen) {
  write(`\n======== bench/${name}.ts ========\n`);
  const { code, seconds } = await run(name);
  times.push(`${name} ${seconds.toFixed(0)} s${code ? ` (exit ${code})` : ''}`);
  if (code) failed++;
}
const verdicts = output
  .split('\n')
  .filter((line) => /^\s+(PASS|FAIL|SKIPPED): /.test(line) && !line.includes('verdicts'));
// Each benchmark prints its verdicts twice (where measured, and in its summary): keep one.
const unique = [...new Set(verdicts.map((line) => line.trim()))];
write(
  `\n======== summary (${((performance.now() - started) / 1000 / 60).toFixed(1)} min: ${times.join(', ')}) ========\n`,
);
for (const line of unique) write(`  ${line}\n`);
if (failed) write(`  ${failed} benchmark(s) did not finish (see above)\n`);
if (flags.out) writeFileSync(flags.out, output);
process.exit(failed ? 1 : 0);
