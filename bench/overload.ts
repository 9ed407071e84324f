/**
 * Overload (issue 33): a flood of streamed turns sent faster than the server can run them, as
 * the outside run sent 2,000 ten-second turns in 60 s. The goal: every request gets an answer
 * soon, a first event or a retryable refusal, however many come (p99 bounded, beside the same
 * server unflooded), and `/healthz` answers within a liveness probe's timeout throughout.
 *
 *   node --import tsx bench/overload.ts [--rate 33] [--seconds 40] [--turn-seconds 10]
 *     [--before <checkout>] [--config '<JSON over the harness config>']
 *
 * Each harness (this checkout's, and `--before`'s: a checkout of earlier code, `git archive
 * <commit> | tar -x -C dir` with node_modules linked) runs in a child process on SQLite against
 * one fixture model (a reply of 50 words, one every `turn-seconds / 50` s), with `metrics.port`
 * set. First unflooded: 6 turns one after the other. Then the flood: `rate` new
 * `SendStreamingMessage` requests a second for `seconds`, each on a connection of its own, each
 * bounded (`seconds + 4 × turn-seconds + 30` s). Throughout, `/healthz` is probed every 250 ms
 * on a new connection, as an orchestrator probes, on the A2A port and on `metrics.port` (where
 * this checkout serves the probes too). A measurement, not a test: it exits 0 whatever the numbers.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { tempDir } from './lib/cleanup.js';
import { floodTurn, probe, probeEvery, type Answer } from './lib/flood.js';
import { startServer, type ServerProcess } from './lib/processes.js';
import { header, latencyLine, printVerdicts, sleep, summarize, verdict } from './lib/report.js';

const { values: flags } = parseArgs({
  options: {
    rate: { type: 'string', default: '33' },
    seconds: { type: 'string', default: '40' },
    'turn-seconds': { type: 'string', default: '10' },
    before: { type: 'string' },
    config: { type: 'string', default: '{}' },
  },
});
const RATE = Number(flags.rate);
const SECONDS = Number(flags.seconds);
const TURN_SECONDS = Number(flags['turn-seconds']);
const WORDS = 50;
const UNFLOODED_TURNS = 6;
const PROBE_EVERY_MS = 250;
/** A probe is a failure past this: Kubernetes' default `timeoutSeconds` is 1, and 10 s is far past any. */
const PROBE_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = (SECONDS + 4 * TURN_SECONDS + 30) * 1000;
/** The goals: a refusal or a first event within this at p99 under the flood, and /healthz within a probe's default timeout. */
const FIRST_ANSWER_P99_GOAL_MS = 2000;
const HEALTHZ_P99_GOAL_MS = 1000;

const model = await startServer(
  { kind: 'model', reply: Array(WORDS).fill('word').join(' '), chunkDelayMs: (TURN_SECONDS * 1000) / WORDS },
  { name: 'model' },
);
const config = {
  defaultModel: 'fixture:small',
  detectOllama: false,
  providers: { fixture: { type: 'openai-compatible', baseURL: model.url, models: ['small'] } },
  drainTimeoutMs: 0,
  metrics: { port: 0 },
  ...(JSON.parse(flags.config) as Record<string, unknown>),
};

/** This process's event-loop delay: how much of a figure is the client's own lag. */
const clientLag = monitorEventLoopDelay({ resolution: 10 });
clientLag.enable();

interface Probed {
  latencies: number[];
  failed: number;
}

interface Phase {
  answers: Answer[];
  /** `/healthz` on the A2A port, and on `metrics.port` when the harness serves it there. */
  healthz: Probed;
  opsHealthz?: Probed;
}

/** Runs `work` with `/healthz` probed on both ports meanwhile. */
async function probing(server: ServerProcess, work: () => Promise<Answer[]>): Promise<Phase> {
  const opsBase = server.metricsUrl?.replace(/\/metrics$/, '');
  const opsServed = opsBase !== undefined && (await probe(opsBase, PROBE_TIMEOUT_MS)) !== undefined;
  const onA2aPort = probeEvery(server.url, PROBE_EVERY_MS, PROBE_TIMEOUT_MS);
  const onOpsPort = opsServed ? probeEvery(opsBase, PROBE_EVERY_MS, PROBE_TIMEOUT_MS) : undefined;
  const answers = await work();
  return { answers, healthz: await onA2aPort.stop(), opsHealthz: await onOpsPort?.stop() };
}

async function oneAfterAnother(server: ServerProcess): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (let i = 0; i < UNFLOODED_TURNS; i++) answers.push(await floodTurn(server.url, `alone ${i}`, REQUEST_TIMEOUT_MS));
  return answers;
}

async function flood(server: ServerProcess): Promise<Answer[]> {
  const sent: Promise<Answer>[] = [];
  const count = Math.round(RATE * SECONDS);
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    // Open loop: each request leaves at its time, whatever the answers to those before it.
    const wait = started + (i * 1000) / RATE - performance.now();
    if (wait > 1) await sleep(wait);
    sent.push(floodTurn(server.url, `flood ${i}`, REQUEST_TIMEOUT_MS));
  }
  return Promise.all(sent);
}

const targets: Array<{ label: string; root?: string }> = [];
if (flags.before) targets.push({ label: 'before', root: flags.before });
targets.push({ label: 'this checkout' });
header('Overload: a flood of streamed turns; time to a first answer, and /healthz', [
  `${RATE} turns a second for ${SECONDS} s (${Math.round(RATE * SECONDS)} turns of ${TURN_SECONDS} s, ${WORDS} words), each on a connection of its own; /healthz every ${PROBE_EVERY_MS} ms on a new connection`,
  `config over the defaults: ${JSON.stringify({ ...config, providers: undefined, defaultModel: undefined })}`,
]);
try {
  for (const target of targets) {
    const server = await startServer(
      { kind: 'harness', dataDir: tempDir(`overload-${target.label.replace(/\W/g, '-')}`), config },
      { name: target.label, root: target.root },
    );
    try {
      clientLag.reset();
      const alone = await probing(server, () => oneAfterAnother(server));
      const flooded = await probing(server, () => flood(server));
      report(target.label, alone, flooded);
    } finally {
      await server.close();
      await model.reset();
    }
  }
  printVerdicts('overload');
} finally {
  await model.close();
}

function healthzLine(label: string, probed: Probed): string {
  const s = summarize(probed.latencies);
  return latencyLine(label, s, `max ${s.max.toFixed(0)} ms, ${probed.failed} failed or past ${PROBE_TIMEOUT_MS} ms`);
}

function report(label: string, alone: Phase, flooded: Phase): void {
  console.log(`\n## ${label}`);
  const aloneFirst = summarize(alone.answers.map((a) => a.first));
  console.log(latencyLine('unflooded: first event', aloneFirst));
  console.log(latencyLine('unflooded: whole turn', summarize(alone.answers.map((a) => a.total))));
  console.log(healthzLine('unflooded: /healthz', alone.healthz));
  if (alone.opsHealthz) console.log(healthzLine('unflooded: /healthz on metrics.port', alone.opsHealthz));
  const by = (outcome: Answer['outcome']) => flooded.answers.filter((a) => a.outcome === outcome);
  const [accepted, refused, failed] = [by('accepted'), by('refused'), by('failed')];
  console.log(
    `  flood: ${flooded.answers.length} sent, ${accepted.length} accepted, ${refused.length} refused, ${failed.length} failed` +
      (failed.length ? ` (${[...new Set(failed.map((a) => a.why))].slice(0, 3).join('; ')})` : ''),
  );
  const first = summarize(flooded.answers.filter((a) => a.outcome !== 'failed').map((a) => a.first));
  console.log(latencyLine('flood: refusal or first event', first, `max ${first.max.toFixed(0)} ms`));
  console.log(latencyLine('flood: refusal', summarize(refused.map((a) => a.first))));
  console.log(latencyLine('flood: first event', summarize(accepted.map((a) => a.first))));
  console.log(latencyLine('flood: whole accepted turn', summarize(accepted.map((a) => a.total))));
  console.log(healthzLine('flood: /healthz', flooded.healthz));
  if (flooded.opsHealthz) console.log(healthzLine('flood: /healthz on metrics.port', flooded.opsHealthz));
  console.log(
    `  the client's own event-loop delay: p99 ${(clientLag.percentile(99) / 1e6).toFixed(0)} ms, max ${(clientLag.max / 1e6).toFixed(0)} ms`,
  );
  verdict(
    first.p99 <= FIRST_ANSWER_P99_GOAL_MS && failed.length === 0,
    `${label}: p99 to a refusal or a first event under the flood at most ${FIRST_ANSWER_P99_GOAL_MS} ms, none unanswered: ` +
      `${first.p99.toFixed(0)} ms (x${(first.p99 / aloneFirst.p99).toFixed(1)} unflooded), ${failed.length} failed`,
  );
  for (const [where, probed] of [
    ['', flooded.healthz],
    [' on metrics.port', flooded.opsHealthz],
  ] as const) {
    if (!probed) continue;
    const s = summarize(probed.latencies);
    verdict(
      s.p99 <= HEALTHZ_P99_GOAL_MS && probed.failed === 0,
      `${label}: /healthz${where} under the flood at p99 within ${HEALTHZ_P99_GOAL_MS} ms: ${s.p99.toFixed(0)} ms, max ${s.max.toFixed(0)} ms, ${probed.failed} failed`,
    );
  }
}
