/**
 * The request path (src/request-path.ts): its order, printed and checked against its comment,
 * the steps each method passes, and that one call passes each step once at most: a blocking
 * send does not go down the path a second time to read its answer, nor a command to read its
 * task. `compose` itself is tested in test/a2a/steps.test.ts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Role, TaskState, type Message, type SendMessageRequest, type Task } from '@a2a-js/sdk';
import { CommandRegistry } from '../../src/commands/index.js';
import {
  CALL_METHODS,
  compose,
  handlerTerminal,
  MessageClaims,
  type ComposedSteps,
  type Step,
} from '../../src/a2a/index.js';
import { silentLogger } from '../../src/log.js';
import { buildRequestPath, requestPathSteps, type RequestPathOptions } from '../../src/request-path.js';
import { TaskView } from '../../src/runtime/subtask-metadata.js';
import { baseAgentCard } from '../../src/server/card.js';
import { createHttpApp } from '../../src/server/http-app.js';
import { HarnessMetrics } from '../../src/telemetry/metrics.js';
import { message, callContext, tempStore, type TempStore } from '../store/helpers.js';
import { localEngine } from './engine-support.js';

const ORDER = ['spans', 'metrics', 'errorMapping', 'cardSignatures', 'commands', 'idempotency', 'generations'];

function send(text: string, task?: Task): SendMessageRequest {
  const msg: Message = message(task?.id ?? '', task?.contextId ?? '', Role.ROLE_USER, text);
  return {
    tenant: '',
    message: msg,
    configuration: {
      acceptedOutputModes: [],
      historyLength: undefined,
      returnImmediately: false,
      taskPushNotificationConfig: undefined,
    },
    metadata: {},
  } as SendMessageRequest;
}

function textOf(message: Message | undefined): string {
  return (message?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
}

let temp: TempStore;
let options: RequestPathOptions;

before(async () => {
  temp = await tempStore();
  const { store } = temp;
  const registry = new CommandRegistry();
  registry.register({ name: 'ping', description: 'Answers pong', handler: () => ({ text: 'pong' }) });
  options = {
    engine: localEngine(store),
    view: new TaskView(store.tasks, store.state),
    feeds: store.feeds,
    claims: new MessageClaims(store.claims),
    registry,
    card: () => baseAgentCard({ httpUrl: 'http://127.0.0.1:0', version: 'test' }),
    log: silentLogger,
    metrics: new HarnessMetrics(),
  };
});

after(() => temp?.dispose());

/** The path as the harness builds it, each step (and the harness's handler) noting every call it receives. */
function countedPath() {
  const seen: string[] = [];
  const { steps, handler } = requestPathSteps(options);
  const noted = steps.map((step): Step => ({
    ...step,
    around: (call, next) => {
      seen.push(`${step.name}.${call.method}`);
      return step.around(call, next);
    },
  }));
  // The handler's own methods call each other: only the calls from outside it are noted.
  const own = handler as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const method of ['sendMessage', 'sendMessageStream', 'getTask']) {
    const original = own[method]!.bind(handler);
    let inside = 0;
    own[method] = (...args: unknown[]) => {
      if (inside === 0) seen.push(`handler.${method}`);
      inside++;
      try {
        return original(...args);
      } finally {
        inside--;
      }
    };
  }
  return { path: compose(noted, handlerTerminal(handler)), seen };
}

/** A blocking `SendMessage` of `request` down `path`. */
function blocking(path: ComposedSteps, request: SendMessageRequest): Promise<Task> {
  return path.run({
    method: 'sendMessage',
    params: request,
    context: callContext(),
    streaming: false,
  }) as Promise<Task>;
}

/** How many calls each step of the path received, in `seen`. */
function callsPerStep(seen: readonly string[]): Record<string, number> {
  const calls: Record<string, number> = Object.fromEntries(ORDER.map((name) => [name, 0]));
  for (const call of seen) {
    const step = call.split('.')[0]!;
    if (step !== 'handler') calls[step]! += 1;
  }
  return calls;
}

describe('the request path', () => {
  it('is one ordered list, outermost first, and its comment lists the same order', (t) => {
    const path = buildRequestPath(options);
    t.diagnostic(`request path: ${path.order.join(' → ')} → the harness's request handler`);
    assert.deepEqual(path.order, ORDER);
    const source = readFileSync(new URL('../../src/request-path.ts', import.meta.url), 'utf8');
    const comment = source.slice(0, source.indexOf('export function requestPathSteps'));
    const documented = [...comment.slice(comment.lastIndexOf('/**')).matchAll(/^ \* - `(\w+)`:/gm)].map((m) => m[1]);
    assert.deepEqual(documented, ORDER);
  });

  it('takes each method only through the steps that do something for it', (t) => {
    const path = buildRequestPath(options);
    for (const method of CALL_METHODS) t.diagnostic(`${method}: ${path.pathOf(method).join(' → ')}`);
    assert.deepEqual(path.pathOf('sendMessage'), [
      'spans',
      'metrics',
      'errorMapping',
      'commands',
      'idempotency',
      'generations',
    ]);
    assert.deepEqual(path.pathOf('sendMessageStream'), [
      'spans',
      'metrics',
      'errorMapping',
      'commands',
      'idempotency',
      'generations',
    ]);
    assert.deepEqual(path.pathOf('getTask'), ['spans', 'metrics', 'errorMapping', 'commands', 'generations']);
    assert.deepEqual(path.pathOf('cancelTask'), ['spans', 'metrics', 'errorMapping', 'commands']);
    assert.deepEqual(path.pathOf('resubscribe'), ['spans', 'metrics', 'errorMapping', 'commands']);
    assert.deepEqual(path.pathOf('createTaskPushNotificationConfig'), ['spans', 'metrics', 'errorMapping', 'commands']);
  });

  it('a blocking send passes each step once, and is answered by the handler without going down the path again', async () => {
    const { path, seen } = countedPath();
    const first = await blocking(path, send('first'));
    assert.equal(first.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const turn = [
      'spans.sendMessage',
      'metrics.sendMessage',
      'errorMapping.sendMessage',
      'commands.sendMessage',
      'idempotency.sendMessage',
      // The turn's stream, then its answer: the stored task, read without going down the path
      // again, past the one step below idempotency (a pass-through for a call without 1.1's fields).
      'generations.sendMessageStream',
      'handler.sendMessageStream',
      'generations.getTask',
      'handler.getTask',
    ];
    assert.deepEqual(seen, turn);

    // On an existing task too.
    seen.length = 0;
    const second = await blocking(path, send('second', first));
    assert.equal(second.id, first.id);
    assert.equal(textOf(second.status?.message), 'reply to second');
    assert.deepEqual(seen, turn);
    assert.deepEqual(callsPerStep(seen), {
      spans: 1,
      metrics: 1,
      errorMapping: 1,
      // It takes GetExtendedAgentCard alone.
      cardSignatures: 0,
      commands: 1,
      idempotency: 1,
      // The stream, then the task it is answered with: each of them once.
      generations: 2,
    });
  });

  it('a command reads its task from the handler, not down the path again', async () => {
    const { path, seen } = countedPath();
    const task = await blocking(path, send('first'));
    seen.length = 0;
    const answer = await blocking(path, send('/ping', task));
    assert.equal(textOf(answer.status?.message), 'pong');
    assert.deepEqual(seen, [
      'spans.sendMessage',
      'metrics.sendMessage',
      'errorMapping.sendMessage',
      'commands.sendMessage',
      'handler.getTask',
    ]);
  });

  it('refuses two steps of one name', () => {
    const { steps, handler } = requestPathSteps(options);
    assert.throws(() => compose([...steps, steps[2]!], handlerTerminal(handler)), /named errorMapping/);
  });

  it('serves the card per call on its route (CMD-16)', async () => {
    const path = buildRequestPath(options);
    const names = () => options.registry.list().map((command) => command.name);
    const commandsOf = (card: { capabilities?: { extensions?: Array<{ params?: unknown }> } }) =>
      JSON.stringify(card.capabilities?.extensions ?? []);
    assert.doesNotMatch(commandsOf(await path.card()), /later/);
    options.registry.register({ name: 'later', description: 'Added while serving', handler: () => ({ text: 'ok' }) });
    try {
      assert.ok(names().includes('later'));
      assert.match(commandsOf(await path.card()), /later/, 'the route builds the card now');
    } finally {
      options.registry.unregister('later');
    }
  });
});

/**
 * The project's files a streamed message (`SendStreamingMessage` over JSON-RPC, not a command)
 * passes from the socket to the store, in order (issue 36: at most 12). The helpers a file
 * calls and returns from (the body reader, the edge schema, the call's context) are not hops;
 * the store's own files are where it arrives. docs/architecture.md lists the same.
 */
const SOCKET_TO_STORE = [
  'server/http-app.ts',
  'server/jsonrpc-binding.ts',
  'server/sse.ts',
  'a2a/steps.ts',
  'telemetry/a2a-spans.ts',
  'telemetry/request-metrics.ts',
  'server/a2a-errors.ts',
  'commands/commands-step.ts',
  'runtime/message-idempotency.ts',
  'runtime/request-handler.ts',
  'runtime/engine.ts',
  'runtime/turn/turn-writer.ts',
];

describe('a streamed message from the socket to the store', () => {
  it("passes at most 12 of the project's files, which docs/architecture.md lists (issue 36)", async (t) => {
    t.diagnostic(`socket → ${SOCKET_TO_STORE.join(' → ')} → store`);
    assert.ok(SOCKET_TO_STORE.length <= 12, `${SOCKET_TO_STORE.length} files`);
    const doc = readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8');
    const listed = doc.slice(doc.indexOf('From the socket to the store'));
    const line = /^`socket` → (.*) → `store`$/m.exec(listed)?.[1];
    assert.deepEqual(
      line?.split(' → ').map((file) => file.replaceAll('`', '')),
      SOCKET_TO_STORE,
      'docs/architecture.md lists the same files',
    );

    // Every file of src/ on the stack where the message reaches the store is in the list.
    const { store } = temp;
    const srcDir = fileURLToPath(new URL('../../src/', import.meta.url));
    const seen = new Set<string>();
    const parts = [store.tasks, store.claims] as unknown as Array<Record<string, unknown>>;
    const restore: Array<() => void> = [];
    for (const part of parts) {
      for (const name of ['append', 'claim']) {
        const original = part[name];
        if (typeof original !== 'function') continue;
        part[name] = function (this: unknown, ...args: unknown[]) {
          const limit = Error.stackTraceLimit;
          Error.stackTraceLimit = 100;
          const stack = new Error().stack ?? '';
          Error.stackTraceLimit = limit;
          for (const frame of stack.split('\n')) {
            const file = /\((.*?):\d+:\d+\)$/.exec(frame)?.[1];
            if (file?.startsWith(srcDir) && !file.startsWith(`${srcDir}store/`)) seen.add(file.slice(srcDir.length));
          }
          return (original as (...a: unknown[]) => unknown).apply(this, args);
        };
        restore.push(() => (part[name] = original));
      }
    }
    const path = buildRequestPath(options);
    const server = createServer(
      createHttpApp({ path: path.path, card: path.card, bodyLimit: '1mb', log: silentLogger }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'SendStreamingMessage',
          params: { message: { messageId: 'socket-to-store', role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
        }),
      });
      assert.match(await response.text(), /^id: \d+\ndata: /m, 'each event with its generation as its SSE id');
    } finally {
      for (const undo of restore) undo();
      server.closeAllConnections();
      server.close();
    }
    t.diagnostic(`seen on the stack: ${[...seen].join(', ')}`);
    assert.ok(seen.has('server/jsonrpc-binding.ts'), 'the stacks were read');
    for (const file of seen) assert.ok(SOCKET_TO_STORE.includes(file), `${file} is on the path`);
  });
});
