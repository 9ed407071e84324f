/**
 * What a run of the conformance kit takes: wall time and the kit's own CPU of `runConform`
 * (what `tiny-harness conform <url>` runs once its command line is parsed), against the harness
 * on its three transports (SQLite, built-in models, gRPC on) and against the bare SDK with the
 * extension mounted (examples/commands-on-sdk.mjs, JSON-RPC and HTTP+JSON), each in a child
 * process. The kit runs in this process, so its start-up is in neither figure.
 *
 *   node --import tsx bench/conform.ts [--runs 10] [--before <checkout>]
 *
 * `--before`: a checkout of earlier code (`git archive <commit> | tar -x -C dir`, with
 * node_modules linked) whose kit (packages/conform/src) runs too, alternating with this one's.
 * Goal (issue 33): a run against the harness under 5 s on a quiet machine, every check kept.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { tempDir, track } from './lib/cleanup.js';
import { startServer } from './lib/processes.js';
import { header, printVerdicts, ROOT, summarize, times, verdict } from './lib/report.js';

const { values: flags } = parseArgs({
  options: { runs: { type: 'string', default: '10' }, before: { type: 'string' } },
});
const RUNS = Number(flags.runs);

type RunConform = typeof import('../packages/conform/src/command-line.js').runConform;
const kit = async (root: string): Promise<RunConform> =>
  (
    (await import(pathToFileURL(join(root, 'packages/conform/src/command-line.ts')).href)) as {
      runConform: RunConform;
    }
  ).runConform;
const kits: { name: string; run: RunConform }[] = [{ name: 'kit', run: await kit(ROOT) }];
if (flags.before) kits.push({ name: 'kit before', run: await kit(flags.before) });

/** The example agent of examples/commands-on-sdk.mjs, in a child process; resolves with its URL. */
async function startExample(): Promise<{ url: string; close: () => void }> {
  const child = track(spawn(process.execPath, [join(ROOT, 'examples/commands-on-sdk.mjs'), '0'], { cwd: ROOT }));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /http:\/\/\S+/.exec(out);
      if (match) resolve(match[0]);
    });
    child.once('exit', (code) => reject(new Error(`the example exited with ${code}`)));
  });
  return { url, close: () => child.kill() };
}

/** One run: wall and CPU milliseconds, and whether every check passed or was skipped. */
async function once(run: RunConform, url: string): Promise<{ wall: number; cpu: number; ok: boolean }> {
  const out = new PassThrough();
  out.resume();
  const cpu = process.cpuUsage();
  const start = performance.now();
  const code = await run({ url, json: true }, out, out);
  const wall = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { wall, cpu: (used.user + used.system) / 1000, ok: code === 0 };
}

const harness = await startServer(
  {
    kind: 'harness',
    dataDir: tempDir('conform-bench'),
    config: { detectOllama: false },
    grpcPort: 0,
  },
  { name: 'harness' },
);
const example = await startExample();
const targets = [
  { name: 'harness (JSON-RPC, HTTP+JSON, gRPC)', url: harness.url },
  { name: 'bare SDK + extension (examples/commands-on-sdk.mjs)', url: example.url },
];
try {
  header('Conformance kit: one run of runConform, wall time and the kit’s CPU', [
    `command: node --import tsx bench/conform.ts --runs ${RUNS}${flags.before ? ` --before ${flags.before}` : ''}`,
    `${RUNS} runs per kit and target after one unmeasured, alternating`,
  ]);
  for (const target of targets) {
    const samples = new Map(kits.map((k) => [k.name, { wall: [] as number[], cpu: [] as number[], failed: 0 }]));
    for (const k of kits) await once(k.run, target.url);
    for (let i = 0; i < RUNS; i++)
      for (const k of kits) {
        const sample = await once(k.run, target.url);
        const entry = samples.get(k.name)!;
        entry.wall.push(sample.wall);
        entry.cpu.push(sample.cpu);
        if (!sample.ok) entry.failed += 1;
      }
    console.log(`\n  against ${target.name}`);
    for (const [name, entry] of samples) {
      const wall = summarize(entry.wall);
      const cpu = summarize(entry.cpu);
      console.log(
        `    ${name.padEnd(12)} wall median ${wall.median.toFixed(0)} ms, p90 ${wall.p90.toFixed(0)}, max ${wall.max.toFixed(0)}; CPU median ${cpu.median.toFixed(0)} ms; runs with a failed check: ${entry.failed}`,
      );
    }
    const now = summarize(samples.get('kit')!.wall);
    const before = samples.get('kit before');
    if (before) console.log(`    kit / kit before: wall ${times(now.median, summarize(before.wall).median)}`);
    if (target.url === harness.url)
      verdict(
        now.median < 5000,
        `a run against the harness: ${now.median.toFixed(0)} ms at the median (goal: under 5 s)`,
      );
  }
} finally {
  await harness.close();
  example.close();
}
printVerdicts('conform');
