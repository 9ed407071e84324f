/**
 * A client that goes away releases what it held, at once: a dropped `SubscribeToTask` stream
 * takes its listener off the task's bus (and an idle task's bus is let go), on every transport.
 * The server runs the real transports and the commands wrapper around the engine's subscriptions
 * and the SDK's handler, on engine buses that say when a listener leaves, so the test waits on that, not on time.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter, getEventListeners } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import {
  DefaultRequestHandler,
  InMemoryTaskStore,
  ServerCallContext,
  type AgentExecutor,
  type ExecutionEventBus,
} from '@a2a-js/sdk/server';
import {
  CommandRegistry,
  CommandsRequestHandler,
  sdkTaskPort,
  withCommandsExtension,
} from '../../src/commands/index.js';
import { TaskEngine } from '../../src/runtime/engine.js';
import { LocalCoordination } from '../../src/runtime/local-coordination.js';
import { Subscriptions } from '../../src/runtime/subscriptions.js';
import { TaskBuses } from '../../src/runtime/task-buses.js';
import { silentLogger } from '../../src/log.js';
import { baseAgentCard } from '../../src/server/card.js';
import { startGrpcServer, type RunningGrpcServer } from '../../src/server/grpc-server.js';
import { createHttpApp } from '../../src/server/http-app.js';
import { collect, createClient, send, TRANSPORTS, type TransportName } from '../e2e/support.js';
import { message } from '../store/helpers.js';
import { startedTask, statusUpdate } from '../support/agent-events.js';
import { waitFor } from '../support/wait.js';

/** The engine's buses, whose buses say when a listener leaves. */
class ObservedBusManager extends TaskBuses {
  readonly changes = new EventEmitter();
  private readonly observed = new WeakSet<ExecutionEventBus>();
  override createOrGetByTaskId(taskId: string, context?: ServerCallContext): ExecutionEventBus {
    const bus = super.createOrGetByTaskId(taskId, context);
    if (!this.observed.has(bus)) {
      this.observed.add(bus);
      const off = bus.off.bind(bus);
      bus.off = (eventName, listener) => {
        off(eventName as never, listener as never);
        this.changes.emit('change');
        return bus;
      };
    }
    return bus;
  }
  override cleanupByTaskId(taskId: string, context?: ServerCallContext): void {
    super.cleanupByTaskId(taskId, context);
    this.changes.emit('change');
  }
  /** What listens to the task's bus now: 0 when it has none. */
  listeners(taskId: string): number {
    const bus = this.getByTaskId(taskId, new ServerCallContext());
    return bus
      ? getEventListeners(bus as unknown as EventTarget, 'event').length +
          getEventListeners(bus as unknown as EventTarget, 'finished').length
      : 0;
  }
  /** Resolves once `listeners(taskId)` is `count`, checked whenever a listener leaves. */
  whenListeners(taskId: string, count: number): Promise<unknown> {
    return waitFor(
      `${count} listeners on the bus of ${taskId}`,
      this.changes,
      'change',
      () => this.listeners(taskId) === count,
      {
        seen: () => `${this.listeners(taskId)} listeners`,
      },
    );
  }

  /** Resolves once the task has no bus, checked whenever a listener or a bus leaves. */
  whenReleased(taskId: string): Promise<unknown> {
    return waitFor(
      `the bus of ${taskId} let go`,
      this.changes,
      'change',
      () => !this.getByTaskId(taskId, new ServerCallContext()),
      {
        seen: () => `the bus kept, with ${this.listeners(taskId)} listeners`,
      },
    );
  }
}

/** Replies to every message at once and waits for input, as a finished turn does. */
const executor: AgentExecutor = {
  async execute(context, bus) {
    const { taskId, contextId } = context;
    bus.publish(startedTask(context));
    const reply = message(taskId, contextId, Role.ROLE_AGENT, 'done');
    bus.publish(statusUpdate(taskId, contextId, TaskState.TASK_STATE_INPUT_REQUIRED, reply));
  },
  async cancelTask() {},
};

let buses: ObservedBusManager;
let httpServer: Server;
let grpc: RunningGrpcServer;
let url: string;
const warnings: Error[] = [];
const onWarning = (warning: Error) => warnings.push(warning);

before(async () => {
  process.on('warning', onWarning);
  const coordination = new LocalCoordination();
  buses = new ObservedBusManager(coordination, () => {});
  const registry = new CommandRegistry();
  registry.register({ name: 'ping', description: 'Answers pong', handler: () => ({ text: 'pong' }) });
  const endpoints: { httpUrl: string; grpcAddress?: string } = { httpUrl: 'http://127.0.0.1:0' };
  const card = () => baseAgentCard({ ...endpoints, version: 'test' });
  const taskStore = new InMemoryTaskStore();
  const engine = new TaskEngine({
    coordination,
    store: {
      save: () => Promise.reject(new Error('unused')),
      load: () => Promise.reject(new Error('unused')),
      modify: () => Promise.reject(new Error('unused')),
      awaitWritesUnderWay: () => Promise.resolve(),
    },
    buses,
    onError: () => {},
  });
  const sdk = new DefaultRequestHandler(withCommandsExtension(card(), registry), taskStore, executor, buses);
  const handler = new CommandsRequestHandler(new Subscriptions(sdk, { taskStore, engine }), {
    registry,
    port: sdkTaskPort(taskStore, buses),
    baseCard: card,
  });
  grpc = await startGrpcServer(handler, '127.0.0.1', 0);
  endpoints.grpcAddress = grpc.address;
  httpServer = createServer(createHttpApp({ handler, bodyLimit: '1mb', log: silentLogger }));
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;
  endpoints.httpUrl = url;
});

after(async () => {
  process.off('warning', onWarning);
  httpServer?.closeAllConnections();
  await new Promise((resolve) => httpServer?.close(resolve));
  await grpc?.close();
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
    it(`a dropped SubscribeToTask on an idle task leaves no listener behind, and the bus goes too, over ${transport}`, async () => {
      const task = await idleTask(transport);
      assert.equal(buses.listeners(task.id), 0, 'the idle task starts with no listener');
      warnings.length = 0;
      for (let i = 0; i < 25; i += 1) {
        if (transport === 'GRPC') await subscribeAndDropGrpc(task.id);
        else await subscribeAndDropHttp(transport, task.id);
        await buses.whenReleased(task.id); // no listener left, and the idle task's bus let go
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
      await buses.whenReleased(task.id);
    });
  }

  it('issue 22: 64 subscribers on one task at once, no MaxListenersExceededWarning; dropped, they leave no listener and the bus goes', async () => {
    const task = await idleTask('JSONRPC');
    warnings.length = 0;
    const subscribers = 64;
    const drops = await Promise.all(Array.from({ length: subscribers }, () => subscribeHttp('JSONRPC', task.id)));
    // Each subscriber's queue listens for 'event' and 'finished'.
    assert.equal(buses.listeners(task.id), 2 * subscribers);
    for (const drop of drops) drop();
    await buses.whenReleased(task.id);
    await new Promise((resolve) => setImmediate(resolve)); // a warning is emitted on the next tick
    assert.deepEqual(
      warnings.map((w) => `${w.name}: ${w.message}`),
      [],
      'no MaxListenersExceededWarning (nor any other)',
    );
  });

  it('a dropped subscription takes only its own listener: another subscriber keeps the bus and hears the next event', async () => {
    const task = await idleTask('JSONRPC');
    const client = await createClient(url, 'JSONRPC');
    const live = client.resubscribeTask({ tenant: '', id: task.id });
    assert.equal(((await live.next()).value?.payload?.value as Task).id, task.id);
    const withLive = buses.listeners(task.id);
    assert.ok(withLive > 0);
    await subscribeAndDropHttp('JSONRPC', task.id);
    await buses.whenListeners(task.id, withLive);
    await send(client, '/ping', { taskId: task.id });
    const rest = await collect(live);
    assert.equal((rest.at(-1)?.payload?.value as any)?.status?.message?.metadata?.command, 'ping');
    await buses.whenReleased(task.id);
  });
});
