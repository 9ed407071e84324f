/**
 * The entry of a server child process: the harness, the bare SDK agent or a fixture model
 * server, chosen by the JSON spec in argv[2]. It tells the parent its URL over IPC, then
 * answers the parent's questions (memory, CPU time, GC, seeding the bare agent's store,
 * releasing a held model reply) and exits when told to close or when the parent goes away.
 * Started by `processes.ts`.
 */
import { performance } from 'node:perf_hooks';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { parseConfig } from '../../src/config/load.js';
import { startHarness } from '../../src/harness.js';
import { startModelServer, type Hold } from '../../test/fixtures/model-server.js';
import { startBareSdkAgent, type BareAgentOptions } from '../bare-sdk-agent.js';
import { prng, seededTask } from './seed.js';
import type { ChildRequest, ServerSpec } from './processes.js';
import { installStepTrace, STEP_TRACE_VARIABLE } from './step-trace.js';
import { tracingRequested } from '../../src/telemetry/tracing-env.js';

const spec = JSON.parse(process.argv[2]!) as ServerSpec;
// A diagnostic some benchmarks ask for (bench/lib/step-trace.ts); installed before the harness loads its parts.
const stepTrace = process.env[STEP_TRACE_VARIABLE];
if (stepTrace && spec.kind === 'harness') await installStepTrace(stepTrace);
// Traces as `serve` turns them on: only when OpenTelemetry's standard variables ask (bench/tracing.ts).
const tracing = tracingRequested(process.env)
  ? (await import('../../src/telemetry/tracing-sdk.js')).startTracing()
  : undefined;

interface Running {
  url: string;
  /** A harness's `/metrics` address, when it has one. */
  metricsUrl?: string;
  close(): Promise<void>;
  seed?(lengths: number[], seed: number): Promise<Array<{ id: string; contextId: string }>>;
  resetRecords?(): void;
  release?(key: string): void;
}

/**
 * A fixture model's replies to prompts holding `HOLD-<key>` pause after two chunks until the
 * parent releases that key, so a benchmark can act while a turn is surely running (as the
 * end-to-end tests do). A release may come before the request it lets go; a released key stays
 * open (a benchmark holds a few hundred at most).
 */
class HeldReplies {
  private readonly gates = new Map<string, { open: () => void; opened: Promise<void> }>();

  holdFor(body: { messages?: unknown }): Hold | undefined {
    const key = /HOLD-(\w+)/.exec(JSON.stringify(body?.messages ?? []))?.[1];
    return key ? { afterChunks: 2, until: this.gate(key).opened } : undefined;
  }

  release(key: string): void {
    this.gate(key).open();
  }

  private gate(key: string) {
    let gate = this.gates.get(key);
    if (!gate) {
      let open!: () => void;
      const opened = new Promise<void>((resolve) => (open = resolve));
      this.gates.set(key, (gate = { open, opened }));
    }
    return gate;
  }
}

async function start(): Promise<Running> {
  switch (spec.kind) {
    case 'harness': {
      const config = parseConfig(JSON.stringify(spec.config));
      // `tokens` (token → user name) turns bearer-token authentication on.
      const auth = spec.tokens ? { tokens: new Map(Object.entries(spec.tokens)) } : undefined;
      const harness = await startHarness({
        config,
        dataDir: spec.dataDir,
        databaseUrl: spec.databaseUrl,
        host: '127.0.0.1',
        port: spec.port ?? 0,
        grpcPort: spec.grpcPort,
        env: {},
        auth,
      });
      return {
        url: harness.url,
        metricsUrl: harness.metricsUrl,
        close: async () => (await harness.close(), await tracing?.shutdown()),
      };
    }
    case 'bare': {
      const options: BareAgentOptions = spec.options;
      const agent = await startBareSdkAgent(options, '127.0.0.1', spec.port ?? 0);
      return {
        url: agent.url,
        close: () => agent.close(),
        async seed(lengths, seed) {
          const random = prng(seed);
          const context = new ServerCallContext();
          const made: Array<{ id: string; contextId: string }> = [];
          for (const length of lengths) {
            const task = seededTask(length, random);
            await agent.taskStore.save(task, context);
            made.push({ id: task.id, contextId: task.contextId });
          }
          return made;
        },
      };
    }
    case 'model': {
      const holds = new HeldReplies();
      const model = await startModelServer({
        reply: spec.reply,
        chunkDelayMs: spec.chunkDelayMs,
        models: ['small'],
        hold: (body) => holds.holdFor(body),
      });
      return {
        url: model.baseURL,
        close: () => model.close(),
        resetRecords: () => void model.requests.splice(0),
        release: (key) => holds.release(key),
      };
    }
  }
}

const running = await start();
const send = (message: unknown) => process.send!(message);
send({ type: 'ready', url: running.url, metricsUrl: running.metricsUrl, pid: process.pid });

let closing = false;
async function close(): Promise<void> {
  if (closing) return;
  closing = true;
  await running.close().catch(() => undefined);
  // A normal exit, so that --cpu-prof writes its profile.
  process.exit(0);
}

process.on('disconnect', () => void close());
process.on('message', async (raw) => {
  const request = raw as ChildRequest;
  try {
    let result: unknown;
    switch (request.type) {
      case 'memory':
        if (request.gc && typeof globalThis.gc === 'function') {
          globalThis.gc();
          globalThis.gc();
        }
        result = process.memoryUsage();
        break;
      case 'cpu':
        result = { ...process.cpuUsage(), now: performance.now() };
        break;
      case 'seed':
        if (!running.seed) throw new Error(`a ${spec.kind} server cannot be seeded`);
        result = await running.seed(request.lengths, request.seed);
        break;
      case 'reset':
        running.resetRecords?.();
        result = true;
        break;
      case 'release':
        if (!running.release) throw new Error(`a ${spec.kind} server holds no replies`);
        running.release(request.key);
        result = true;
        break;
      case 'close':
        send({ id: request.id, result: true });
        await close();
        return;
    }
    send({ id: request.id, result });
  } catch (error) {
    send({ id: request.id, error: String((error as Error)?.stack ?? error) });
  }
});
