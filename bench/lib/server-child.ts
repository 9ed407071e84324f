/**
 * The entry of a server child process: the harness, the bare SDK agent or a fixture model
 * server, chosen by the JSON spec in argv[2]. It tells the parent its URL over IPC, then
 * answers the parent's questions (memory, CPU time, GC, seeding the bare agent's store) and
 * exits when told to close or when the parent goes away. Started by `processes.ts`.
 */
import { performance } from 'node:perf_hooks';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { parseConfig } from '../../src/config/load.js';
import { startHarness } from '../../src/harness.js';
import { startModelServer } from '../../test/fixtures/model-server.js';
import { startBareSdkAgent, type BareAgentOptions } from '../bare-sdk-agent.js';
import { prng, seededTask } from './seed.js';
import type { ChildRequest, ServerSpec } from './processes.js';

const spec = JSON.parse(process.argv[2]!) as ServerSpec;

interface Running {
  url: string;
  close(): Promise<void>;
  seed?(lengths: number[], seed: number): Promise<Array<{ id: string; contextId: string }>>;
  resetRecords?(): void;
}

async function start(): Promise<Running> {
  switch (spec.kind) {
    case 'harness': {
      const config = parseConfig(JSON.stringify(spec.config));
      // `tokens` (token → user name) turns bearer-token authentication on.
      const auth = spec.tokens ? { tokens: new Map(Object.entries(spec.tokens)) } : undefined;
      const harness = await startHarness({ config, dataDir: spec.dataDir, databaseUrl: spec.databaseUrl, host: '127.0.0.1', port: spec.port ?? 0, env: {}, auth });
      return { url: harness.url, close: () => harness.close() };
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
      const model = await startModelServer({ reply: spec.reply, chunkDelayMs: spec.chunkDelayMs, models: ['small'] });
      return { url: model.baseURL, close: () => model.close(), resetRecords: () => void model.requests.splice(0) };
    }
  }
}

const running = await start();
const send = (message: unknown) => process.send!(message);
send({ type: 'ready', url: running.url, pid: process.pid });

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
