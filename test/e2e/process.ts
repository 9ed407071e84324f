/** Runs the real command line in a child process, as a user would, for restart and crash tests. */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StreamResponse } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { startModelServer, type ModelServerScript, type RunningModelServer } from '../fixtures/model-server.js';
import { tempSchema, type TempSchema } from '../support/postgres.js';
import { cliProgram, spawnGroup } from '../support/processes.js';
import { waitFor } from '../support/wait.js';
import { createClient, sendStream } from './support.js';

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  stderr(): string;
  /** Resolves once its standard error (the log) matches `pattern`. */
  logged(what: string, pattern: RegExp): Promise<void>;
  /** Sends the signal and resolves with the exit code (null when killed by a signal). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** `program`: how node runs the command line; the built bundle by default. */
export async function startServerProcess(
  args: string[],
  env: Record<string, string> = {},
  program: string[] = cliProgram(),
): Promise<ServerProcess> {
  const child = spawnGroup(process.execPath, [...program, 'serve', '--port', '0', ...args], {
    env: { ...process.env, OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${stderr}`)), 20000);
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${stderr}`));
    });
  });
  return {
    url,
    child,
    stderr: () => stderr,
    logged: async (what, pattern) => void (await waitFor(what, child.stderr, 'data', () => pattern.test(stderr))),
    stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/**
 * Writes `config.json` into `dir`: the fixture model server as the only provider, `small` the default
 * (`models`: those it offers; `instanceLeaseMs`: the lease of an instance on a shared database). Returns its path.
 */
export function writeFixtureConfig(
  dir: string,
  baseURL: string,
  {
    models = ['small', 'large'],
    instanceLeaseMs,
    extra,
  }: { models?: string[]; instanceLeaseMs?: number; extra?: Record<string, unknown> } = {},
): string {
  const file = join(dir, 'config.json');
  writeFileSync(
    file,
    JSON.stringify({
      defaultModel: 'fixture:small',
      detectOllama: false,
      instanceLeaseMs,
      providers: { fixture: { type: 'openai-compatible', baseURL, models } },
      // Whether a loop lags depends on the machine's load: no refusal for it in tests (as support.ts).
      admission: { maxEventLoopDelayMs: 0 },
      // No instruction file of the folder the process starts in reaches the model (as support.ts).
      instructions: [],
      ...extra,
    }),
  );
  return file;
}

export interface ClusterOptions {
  /** The instances' names, also their data directories' (three: `instance-0` to `instance-2`, by default). */
  names?: string[];
  /** The lease of an instance; the config's default when not set. */
  instanceLeaseMs?: number;
  /** Together, so that their migrations race as after a deploy; or one after another, each on a schema already set up. */
  start: 'together' | 'one by one';
  /** The fixture model's reply. */
  reply: ModelServerScript['reply'];
  /** The tool calls the fixture model asks for; none by default. */
  toolCalls?: ModelServerScript['toolCalls'];
  /** Chunks a held reply sends before it pauses. */
  holdAfterChunks: number;
  /** The fixture model's delay before each chunk: turns that take a while. */
  chunkDelayMs?: number;
  /** Where a request's hold key (`HOLD-<key>`) is looked for: all its messages by default. */
  holdKeyIn?: (body: any) => string;
  /** The database URL the instances get, from the schema's. */
  databaseUrl?: (schema: TempSchema) => string;
  /** More keys of the instances' config file. */
  config?: Record<string, unknown>;
}

export interface Cluster {
  schema: TempSchema;
  model: RunningModelServer;
  /** The instances of `names`, in their order. */
  instances: ServerProcess[];
  /** A JSON-RPC client per instance, in the same order. */
  clients: Client[];
  /** One more instance on the same schema and config; stopped by `close()` too. */
  startInstance(name: string): Promise<ServerProcess>;
  /** Holds every reply whose prompt carries `HOLD-<key>` until `release()`. */
  hold(key?: string): { key: string; release(): void };
  /** Starts a streamed turn on `client` whose reply is held; resolves once the model has its request. */
  heldTurn(client: Client, message?: { taskId?: string; messageId?: string }): Promise<HeldTurn>;
  close(): Promise<void>;
}

export interface HeldTurn {
  taskId: string;
  key: string;
  /** The text of the turn's message. */
  text: string;
  messageId: string;
  /** The stream's first event. */
  first: StreamResponse;
  /** The rest of the stream. */
  stream: AsyncGenerator<StreamResponse, void, undefined>;
  release(): void;
}

/**
 * Several `serve --database` processes on a PostgreSQL schema of their own, sharing one config
 * whose only model is a fixture whose replies can be held, each by its own key.
 */
export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const holds = new Map<string, { until: Promise<void>; release: () => void }>();
  const hold = (key = randomUUID().replaceAll('-', '')) => {
    let release!: () => void;
    const until = new Promise<void>((resolve) => (release = resolve));
    holds.set(key, { until, release });
    return { key, release };
  };
  const holdKeyIn = options.holdKeyIn ?? ((body: any) => JSON.stringify(body?.messages ?? []));
  /** Every instance started, stopped by `close()`, even when a later one failed to start. */
  const instances: ServerProcess[] = [];
  const schema = await tempSchema();
  const dir = mkdtempSync(join(tmpdir(), 'tiny-harness-instances-'));
  let model: RunningModelServer | undefined;
  const close = async () => {
    for (const held of holds.values()) held.release();
    // A paused (SIGSTOP) instance would not see its SIGTERM.
    for (const instance of instances) instance.child.kill('SIGCONT');
    await Promise.all(instances.map((instance) => instance.stop('SIGTERM')));
    await model?.close();
    await schema.drop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    model = await startModelServer({
      reply: options.reply,
      toolCalls: options.toolCalls,
      chunkDelayMs: options.chunkDelayMs,
      hold: (body) => {
        const key = /HOLD-(\w+)/.exec(holdKeyIn(body))?.[1];
        const held = key ? holds.get(key) : undefined;
        return held ? { afterChunks: options.holdAfterChunks, until: held.until } : undefined;
      },
    });
    const config = writeFixtureConfig(dir, model.baseURL, {
      models: ['small'],
      instanceLeaseMs: options.instanceLeaseMs,
      extra: options.config,
    });
    const databaseUrl = options.databaseUrl?.(schema) ?? schema.url;
    const startInstance = async (name: string) => {
      const instance = await startServerProcess([
        '--database',
        databaseUrl,
        '--data-dir',
        join(dir, name),
        '--config',
        config,
      ]);
      instances.push(instance);
      return instance;
    };
    let named: ServerProcess[] = [];
    const names = options.names ?? ['instance-0', 'instance-1', 'instance-2'];
    if (options.start === 'together') named = await Promise.all(names.map(startInstance));
    else for (const name of names) named.push(await startInstance(name));
    const clients = await Promise.all(named.map((instance) => createClient(instance.url, 'JSONRPC')));
    return {
      schema,
      model,
      instances: named,
      clients,
      startInstance,
      hold,
      async heldTurn(client, { taskId, messageId } = {}) {
        const { key, release } = hold();
        const text = `HOLD-${key} please write`;
        const id = messageId ?? randomUUID();
        const stream = sendStream(client, text, { taskId, messageId: id });
        const first = (await stream.next()).value as StreamResponse;
        const payload = first.payload;
        const turnTaskId = payload?.$case === 'task' ? payload.value.id : (payload?.value as { taskId: string }).taskId;
        await model!.waitForRequest((request) => holdKeyIn(request.body).includes(`HOLD-${key}`));
        return { taskId: turnTaskId, key, text, messageId: id, first, stream, release };
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
