/**
 * A client that goes away releases what it held, at once: a dropped `SubscribeToTask` stream
 * closes its reader of the task's log, on every transport. The server runs the real transports
 * and the harness's request path around the engine, on log readers that say when one closes,
 * so the test waits on that, not on time.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TaskState, type Task } from '@a2a-js/sdk';
import { CommandRegistry } from '../../src/commands/index.js';
import { MessageClaims } from '../../src/a2a/index.js';
import { silentLogger } from '../../src/log.js';
import { buildRequestPath } from '../../src/request-path.js';
import { TaskView } from '../../src/runtime/subtask-metadata.js';
import { baseAgentCard } from '../../src/server/card.js';
import { startGrpcServer, type RunningGrpcServer } from '../../src/server/grpc-server.js';
import { createHttpApp } from '../../src/server/http-app.js';
import { collect, createClient, send, TRANSPORTS, type TransportName } from '../e2e/support.js';
import { tempStore, type TempStore } from '../store/helpers.js';
import { waitFor } from '../support/wait.js';
import { localEngine } from './engine-support.js';
import type { LogSubscription } from '../../src/ports.js';

/** The store's log readers, counting those open on each task and saying when one closes. */
class ObservedFeeds {
  readonly changes = new EventEmitter();
  private readonly open = new Map<string, number>();

  constructor(private readonly feeds: { follow(taskId: string): Promise<LogSubscription> }) {}

  async follow(taskId: string): Promise<LogSubscription> {
    const subscription = await this.feeds.follow(taskId);
    this.open.set(taskId, this.readers(taskId) + 1);
    const close = subscription.close.bind(subscription);
    let closed = false;
    subscription.close = () => {
      close();
      if (closed) return;
      closed = true;
      this.open.set(taskId, this.readers(taskId) - 1);
      this.changes.emit('change');
    };
    return subscription;
  }

  /** How many readers follow the task now. */
  readers(taskId: string): number {
    return this.open.get(taskId) ?? 0;
  }

  /** Resolves once `readers(taskId)` is `count`, checked whenever a reader closes. */
  whenReaders(taskId: string, count: number): Promise<unknown> {
    if (this.readers(taskId) === count) return Promise.resolve();
    return waitFor(`${count} readers of ${taskId}`, this.changes, 'change', () => this.readers(taskId) === count, {
      seen: () => `${this.readers(taskId)} readers`,
    });
  }
}

let temp: TempStore;
let feeds: ObservedFeeds;
let httpServer: Server;
let grpc: RunningGrpcServer;
let url: string;
const warnings: Error[] = [];
const onWarning = (warning: Error) => warnings.push(warning);

before(async () => {
  process.on('warning', onWarning);
  temp = await tempStore();
  const { store } = temp;
  feeds = new ObservedFeeds(store.feeds);
  const registry = new CommandRegistry();
  registry.register({ name: 'ping', description: 'Answers pong', handler: () => ({ text: 'pong' }) });
  const endpoints: { httpUrl: string; grpcAddress?: string } = { httpUrl: 'http://127.0.0.1:0' };
  // Replies to every message at once and waits for input, as a finished turn does.
  const engine = localEngine(store);
  const path = buildRequestPath({
    engine,
    view: new TaskView(store.tasks, store.state),
    feeds,
    claims: new MessageClaims(store.claims),
    registry,
    card: () => baseAgentCard({ ...endpoints, version: 'test' }),
    log: silentLogger,
  });
  grpc = await startGrpcServer(path.path, '127.0.0.1', 0);
  endpoints.grpcAddress = grpc.address;
  httpServer = createServer(createHttpApp({ path: path.path, card: path.card, bodyLimit: '1mb', log: silentLogger }));
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;
  endpoints.httpUrl = url;
});

after(async () => {
  process.off('warning', onWarning);
  httpServer?.closeAllConnections();
  await new Promise((resolve) => httpServer?.close(resolve));
  await grpc?.close();
  await temp?.dispose();
});

/** Opens a subscription over raw HTTP, waits for its first event, and destroys the socket. */
async function subscribeAndDropHttp(transport: 'JSONRPC' | 'HTTP+JSON', taskId: string): Promise<void> {
  const drop = await subscribeHttp(transport, taskId);
  drop();
}

/** Opens a subscription over raw HTTP and waits for its first event; resolves with what drops it (destroys the socket). */
function subscribeHttp(transport: 'JSONRPC' | 'HTTP+JSON', taskId: string): Promise<() => void> {
  const [path, method, body] =
    transport === 'JSONRPC'
      ? [
          '/a2a/jsonrpc',
          'POST',
          JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id: taskId } }),
        ]
      : [`/a2a/rest/tasks/${taskId}:subscribe`, 'GET', undefined];
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      { method, headers: { 'content-type': 'application/json', 'a2a-version': '1.0' } },
      (res) => {
        res.once('data', (chunk: Buffer) => {
          if (!chunk.toString().includes(taskId)) reject(new Error(`unexpected first event: ${chunk}`));
          resolve(() => req.destroy());
        });
      },
    );
    req.once('error', (error) => (req.destroyed ? undefined : reject(error)));
    req.end(body);
  });
}

/** Opens a subscription with the SDK's gRPC client, reads its first event, and cancels the call. */
async function subscribeAndDropGrpc(taskId: string): Promise<void> {
  const client = await createClient(url, 'GRPC');
  const abort = new AbortController();
  const stream = client.resubscribeTask({ tenant: '', id: taskId }, { signal: abort.signal });
  const first = await stream.next();
  assert.equal((first.value?.payload?.value as Task | undefined)?.id, taskId);
  abort.abort();
  await stream.return(undefined).catch(() => undefined); // ends the client side; the cancel is what counts
}

async function idleTask(transport: TransportName): Promise<Task> {
  const task = await send(await createClient(url, transport), 'hello');
  assert.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
  return task;
}

describe('a client that goes away', () => {
  for (const transport of TRANSPORTS) {
    it(`a dropped SubscribeToTask on an idle task leaves no reader of its log behind, over ${transport}`, async () => {
      const task = await idleTask(transport);
      assert.equal(feeds.readers(task.id), 0, 'the idle task starts with no reader');
      warnings.length = 0;
      for (let i = 0; i < 25; i += 1) {
        if (transport === 'GRPC') await subscribeAndDropGrpc(task.id);
        else await subscribeAndDropHttp(transport, task.id);
        await feeds.whenReaders(task.id, 0); // no reader left
      }
      assert.deepEqual(
        warnings.map((w) => w.name),
        [],
        'no MaxListenersExceededWarning (nor any other)',
      );

      // A subscriber that stays still hears the task's next event.
      const client = await createClient(url, transport);
      const live = client.resubscribeTask({ tenant: '', id: task.id });
      assert.equal(((await live.next()).value?.payload?.value as Task).id, task.id);
      const reply = await send(client, '/ping', { taskId: task.id });
      assert.equal(
        reply.status?.message?.parts[0]?.content?.$case === 'text' && reply.status.message.parts[0].content.value,
        'pong',
      );
      const rest = await collect(live);
      assert.equal((rest.at(-1)?.payload?.value as any)?.status?.message?.metadata?.command, 'ping');
      await feeds.whenReaders(task.id, 0);
    });
  }

  it('issue 22: 64 subscribers on one task at once, no MaxListenersExceededWarning; dropped, they leave no reader behind', async () => {
    const task = await idleTask('JSONRPC');
    warnings.length = 0;
    const subscribers = 64;
    const drops = await Promise.all(Array.from({ length: subscribers }, () => subscribeHttp('JSONRPC', task.id)));
    assert.equal(feeds.readers(task.id), subscribers);
    for (const drop of drops) drop();
    await feeds.whenReaders(task.id, 0);
    await new Promise((resolve) => setImmediate(resolve)); // a warning is emitted on the next tick
    assert.deepEqual(
      warnings.map((w) => `${w.name}: ${w.message}`),
      [],
      'no MaxListenersExceededWarning (nor any other)',
    );
  });

  it('a dropped subscription closes only its own reader: another subscriber hears the next event', async () => {
    const task = await idleTask('JSONRPC');
    const client = await createClient(url, 'JSONRPC');
    const live = client.resubscribeTask({ tenant: '', id: task.id });
    assert.equal(((await live.next()).value?.payload?.value as Task).id, task.id);
    assert.equal(feeds.readers(task.id), 1);
    await subscribeAndDropHttp('JSONRPC', task.id);
    await feeds.whenReaders(task.id, 1);
    await send(client, '/ping', { taskId: task.id });
    const rest = await collect(live);
    assert.equal((rest.at(-1)?.payload?.value as any)?.status?.message?.metadata?.command, 'ping');
    await feeds.whenReaders(task.id, 0);
  });
});
