/**
 * The request path (src/request-path.ts): its order, printed and checked against its comment,
 * the steps each method passes, and that one call passes each step once at most: a blocking
 * send no longer goes down the path a second time to read its answer, nor a command to read
 * its task.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Role, TaskState, type Message, type SendMessageRequest, type Task } from '@a2a-js/sdk';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { CommandRegistry } from '../../src/commands/index.js';
import { MessageClaims } from '../../src/a2a/index.js';
import { silentLogger } from '../../src/log.js';
import {
  buildRequestPath,
  compose,
  REQUEST_METHODS,
  requestPathSteps,
  type RequestPathOptions,
} from '../../src/request-path.js';
import { TaskView } from '../../src/runtime/subtask-metadata.js';
import { baseAgentCard } from '../../src/server/card.js';
import { HarnessMetrics } from '../../src/telemetry/metrics.js';
import { message, callContext, tempStore, type TempStore } from '../store/helpers.js';
import { localEngine } from './engine-support.js';

const ORDER = ['spans', 'metrics', 'sseIds', 'errorMapping', 'transportCard', 'commands', 'idempotency'];

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
  const note = <H extends A2ARequestHandler>(name: string, handler: H, owns: (method: string) => boolean): H => {
    for (const method of REQUEST_METHODS) {
      if (!owns(method)) continue;
      const original = handler[method] as (...args: unknown[]) => unknown;
      (handler as Record<string, unknown>)[method] = function (this: unknown, ...args: unknown[]) {
        seen.push(`${name}.${method}`);
        return original.apply(this, args);
      };
    }
    return handler;
  };
  const { interceptors, handler: terminal } = requestPathSteps(options);
  const path = compose(
    interceptors.map(({ name, around }) => ({
      name,
      around: (below: A2ARequestHandler) => {
        const handler = around(below);
        return note(name, handler, (method) => handler.intercepts(method as never));
      },
    })),
    // A handler in front of the harness's, not its own methods: those also call each other.
    note('handler', forwarding(terminal), () => true),
  );
  return { path, seen };
}

function forwarding(handler: A2ARequestHandler): A2ARequestHandler {
  return Object.fromEntries(
    REQUEST_METHODS.map((method) => [
      method,
      (...args: unknown[]) => (handler[method] as (...a: unknown[]) => unknown).apply(handler, args),
    ]),
  ) as unknown as A2ARequestHandler;
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
    for (const method of REQUEST_METHODS) t.diagnostic(`${method}: ${path.pathOf(method).join(' → ')}`);
    assert.deepEqual(path.pathOf('sendMessage'), ['spans', 'metrics', 'errorMapping', 'commands', 'idempotency']);
    assert.deepEqual(path.pathOf('sendMessageStream'), [
      'spans',
      'metrics',
      'sseIds',
      'errorMapping',
      'commands',
      'idempotency',
    ]);
    assert.deepEqual(path.pathOf('getTask'), ['spans', 'metrics', 'errorMapping', 'commands']);
    assert.deepEqual(path.pathOf('cancelTask'), ['spans', 'metrics', 'errorMapping', 'commands']);
    assert.deepEqual(path.pathOf('resubscribe'), ['spans', 'metrics', 'sseIds', 'errorMapping', 'commands']);
    assert.deepEqual(path.pathOf('getAgentCard'), ['transportCard', 'commands']);
  });

  it('a blocking send passes each step once, and is answered by the handler without going down the path again', async () => {
    const { path, seen } = countedPath();
    const first = (await path.handler.sendMessage(send('first'), callContext())) as Task;
    assert.equal(first.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const turn = [
      'spans.sendMessage',
      'metrics.sendMessage',
      'errorMapping.sendMessage',
      'commands.sendMessage',
      'idempotency.sendMessage',
      // The turn's stream, then its answer: the stored task, read without going down the path again.
      'handler.sendMessageStream',
      'handler.getTask',
    ];
    assert.deepEqual(seen, turn);

    // On an existing task too.
    seen.length = 0;
    const second = (await path.handler.sendMessage(send('second', first), callContext())) as Task;
    assert.equal(second.id, first.id);
    assert.equal(textOf(second.status?.message), 'reply to second');
    assert.deepEqual(seen, turn);
    assert.deepEqual(callsPerStep(seen), {
      spans: 1,
      metrics: 1,
      sseIds: 0,
      errorMapping: 1,
      transportCard: 0,
      commands: 1,
      idempotency: 1,
    });
  });

  it('a command reads its task from the handler, not down the path again', async () => {
    const { path, seen } = countedPath();
    const task = (await path.handler.sendMessage(send('first'), callContext())) as Task;
    seen.length = 0;
    const answer = (await path.handler.sendMessage(send('/ping', task), callContext())) as Task;
    assert.equal(textOf(answer.status?.message), 'pong');
    assert.deepEqual(seen, [
      'spans.sendMessage',
      'metrics.sendMessage',
      'errorMapping.sendMessage',
      'commands.sendMessage',
      'handler.getTask',
    ]);
  });

  it('refuses two steps of one name, and an entry point it does not have', () => {
    const { interceptors, handler } = requestPathSteps(options);
    assert.throws(() => compose([...interceptors, interceptors[3]!], handler), /named errorMapping/);
    assert.throws(() => compose(interceptors, handler).from('nowhere'), /no step named nowhere/);
  });
});
