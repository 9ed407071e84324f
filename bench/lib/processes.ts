/**
 * Servers in child processes, so that a server's CPU and memory are its own (not the load
 * generator's) and the client and the server each get a core. `startServer` forks
 * `server-child.ts` with tsx, waits for its URL, and returns a handle to ask it for
 * `process.memoryUsage()` (after a forced GC when started with `exposeGc`), CPU time, to seed
 * the bare agent's store, and to close it. Set BENCH_CPU_PROF=<dir> to write a V8 CPU profile
 * of every server child into <dir>/<name> (`node --cpu-prof`; the largest file of a folder is
 * the main thread's).
 */
import { fork } from 'node:child_process';
import { join } from 'node:path';
import type { BareAgentOptions } from '../bare-sdk-agent.js';
import { track } from './cleanup.js';
import { ROOT } from './report.js';

/**
 * The `admission` config of every benchmark's harness but bench/overload.ts's: every request let
 * in, since what they measure is how the harness carries a load, not how it refuses one (a
 * refusal would end most of them with an error).
 */
export const ADMIT_ALL = { maxRequestsInProgress: 1_000_000, maxEventLoopDelayMs: 0 };

export type ServerSpec =
  | {
      kind: 'harness';
      dataDir: string;
      config: Record<string, unknown>;
      port?: number;
      /** Serve gRPC too, on this port (0: a free one); the card then names it. */
      grpcPort?: number;
      tokens?: Record<string, string>;
      /** Store in this PostgreSQL database (a schema of the benchmark's own: bench/lib/postgres.ts) instead of SQLite in `dataDir`. */
      databaseUrl?: string;
    }
  | { kind: 'bare'; options: BareAgentOptions; port?: number }
  | { kind: 'model'; reply: string; chunkDelayMs?: number };

export type ChildRequest = { id: number } & (
  | { type: 'memory'; gc?: boolean }
  | { type: 'cpu' }
  | { type: 'seed'; lengths: number[]; seed: number }
  | { type: 'reset' }
  | { type: 'release'; key: string }
  | { type: 'close' }
);

type Distribute<T> = T extends unknown ? Omit<T, 'id'> : never;

export interface CpuSample {
  user: number;
  system: number;
  now: number;
}

export interface ServerProcess {
  url: string;
  /** A harness's `/metrics` address, when it has one. */
  metricsUrl?: string;
  pid: number;
  memory(gc?: boolean): Promise<NodeJS.MemoryUsage>;
  cpu(): Promise<CpuSample>;
  seed(lengths: number[], seed: number): Promise<Array<{ id: string; contextId: string }>>;
  reset(): Promise<void>;
  /** A fixture model: lets the reply to the prompt holding `HOLD-<key>` go on (server-child.ts). */
  release(key: string): Promise<void>;
  close(): Promise<void>;
}

/** CPU milliseconds (user + system) the server spent between two samples. */
export function cpuMs(before: CpuSample, after: CpuSample): number {
  return (after.user + after.system - before.user - before.system) / 1000;
}

export async function startServer(
  spec: ServerSpec,
  options: {
    exposeGc?: boolean;
    name?: string;
    /** Variables over this process's (OpenTelemetry's, say). */
    env?: Record<string, string>;
    /** Another checkout whose server child to run (a baseline of earlier code); default: this one. */
    root?: string;
  } = {},
): Promise<ServerProcess> {
  const execArgv = ['--import', 'tsx'];
  if (options.exposeGc) execArgv.push('--expose-gc');
  const profDir = process.env.BENCH_CPU_PROF;
  // One folder per server: the main thread and tsx's loader thread each write a profile there.
  if (profDir) execArgv.push('--cpu-prof', '--cpu-prof-dir', join(profDir, options.name ?? spec.kind));
  const child = track(
    fork(join(options.root ?? ROOT, 'bench/lib/server-child.ts'), [JSON.stringify(spec)], {
      cwd: options.root ?? ROOT,
      env: { ...process.env, ...options.env },
      execArgv,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
    }),
  );
  let nextId = 1;
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  const ready = new Promise<{ url: string; metricsUrl?: string; pid: number }>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${spec.kind} server exited with ${code} before it was ready`)));
    child.on('message', (raw) => {
      const message = raw as {
        type?: string;
        url?: string;
        metricsUrl?: string;
        pid?: number;
        id?: number;
        result?: unknown;
        error?: string;
      };
      if (message.type === 'ready')
        return resolve({ url: message.url!, metricsUrl: message.metricsUrl, pid: message.pid! });
      const waiter = pending.get(message.id!);
      if (!waiter) return;
      pending.delete(message.id!);
      if (message.error) waiter.reject(new Error(`${spec.kind} server: ${message.error}`));
      else waiter.resolve(message.result);
    });
  });
  child.on('exit', () => {
    for (const waiter of pending.values()) waiter.reject(new Error(`${spec.kind} server exited`));
    pending.clear();
  });
  const { url, metricsUrl, pid } = await ready;
  const ask = <T>(request: Distribute<ChildRequest>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve: (value) => resolve(value as T), reject });
      // With a callback, a child gone meanwhile (killed on Ctrl+C) is a rejection, not an uncaught 'error' event.
      child.send({ ...request, id }, (error) => {
        if (!error) return;
        pending.delete(id);
        reject(new Error(`${spec.kind} server exited`));
      });
    });
  return {
    url,
    metricsUrl,
    pid,
    memory: (gc = false) => ask({ type: 'memory', gc }),
    cpu: () => ask({ type: 'cpu' }),
    seed: (lengths, seed) => ask({ type: 'seed', lengths, seed }),
    reset: () => ask({ type: 'reset' }),
    release: (key) => ask({ type: 'release', key }),
    async close() {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      await ask({ type: 'close' }).catch(() => undefined);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
