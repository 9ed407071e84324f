/**
 * The request path (src/request-path.ts): its order, printed and checked against its comment,
 * the steps each method passes, and that one call passes each step once at most: a blocking
 * send does not go down the path a second time to read its answer, nor a command to read its
 * task. `compose` itself is tested in test/a2a/steps.test.ts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
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
import { HarnessMetrics } from '../../src/telemetry/metrics.js';
import { message, callContext, tempStore, type TempStore } from '../store/helpers.js';
import { localEngine } from './engine-support.js';

const ORDER = ['spans', 'metrics', 'sseIds', 'errorMapping', 'commands', 'idempotency', 'generations'];

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
      'sseIds',
      'errorMapping',
      'commands',
      'idempotency',
      'generations',
    ]);
    assert.deepEqual(path.pathOf('getTask'), ['spans', 'metrics', 'errorMapping', 'commands', 'generations']);
    assert.deepEqual(path.pathOf('cancelTask'), ['spans', 'metrics', 'errorMapping', 'commands']);
    assert.deepEqual(path.pathOf('resubscribe'), ['spans', 'metrics', 'sseIds', 'errorMapping', 'commands']);
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
      sseIds: 0,
      errorMapping: 1,
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
    assert.throws(() => compose([...steps, steps[3]!], handlerTerminal(handler)), /named errorMapping/);
  });

  it("serves the card per call on its route, and keeps the transports' first one", async () => {
    const path = buildRequestPath(options);
    const names = () => options.registry.list().map((command) => command.name);
    const commandsOf = (card: { capabilities?: { extensions?: Array<{ params?: unknown }> } }) =>
      JSON.stringify(card.capabilities?.extensions ?? []);
    const kept = commandsOf(await path.handler.getAgentCard());
    options.registry.register({ name: 'later', description: 'Added while serving', handler: () => ({ text: 'ok' }) });
    try {
      assert.ok(names().includes('later'));
      assert.match(commandsOf(await path.card()), /later/, 'the route builds the card now (CMD-16)');
      assert.equal(commandsOf(await path.handler.getAgentCard()), kept);
    } finally {
      options.registry.unregister('later');
    }
  });
});
