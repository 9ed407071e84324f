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
import { type A2ARequestHandler, type AgentExecutor } from '@a2a-js/sdk/server';
import { CommandRegistry } from '../../src/commands/index.js';
import { MessageClaims } from '../../src/a2a/index.js';
import { silentLogger } from '../../src/log.js';
import {
  buildRequestPath,
  compose,
  HARNESS_TURNS_ENTRY,
  REQUEST_METHODS,
  requestPathSteps,
  type RequestPathOptions,
} from '../../src/request-path.js';
import { TaskEngine } from '../../src/runtime/engine.js';
import { LocalCoordination } from '../../src/runtime/local-coordination.js';
import { baseAgentCard } from '../../src/server/card.js';
import { callContext, message, tempStore, textPart, type TempStore } from '../store/helpers.js';
import { artifactUpdate, startedTask, statusUpdate } from '../support/agent-events.js';

const ORDER = [
  'errorMapping',
  'transportCard',
  'commands',
  'blockingAsStream',
  'idempotency',
  'subscriptions',
  'singleTurn',
  'cancellation',
  'trackedTurns',
];

/** An agent that streams a reply into an artifact, then waits for input. */
const executor: AgentExecutor = {
  async execute(context, bus) {
    const { taskId, contextId } = context;
    bus.publish(startedTask(context));
    bus.publish(artifactUpdate(taskId, contextId, [textPart('words')]));
    bus.publish(
      statusUpdate(
        taskId,
        contextId,
        TaskState.TASK_STATE_INPUT_REQUIRED,
        message(taskId, contextId, Role.ROLE_AGENT, 'done'),
      ),
    );
    bus.finished();
  },
  async cancelTask() {},
};

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
    engine: new TaskEngine({ coordination: new LocalCoordination(), store: store.tasks, onError: () => {} }),
    executor,
    taskStore: store.tasks,
    claims: new MessageClaims(store.claims),
    links: store.state,
    registry,
    card: () => baseAgentCard({ httpUrl: 'http://127.0.0.1:0', version: 'test' }),
    log: silentLogger,
  };
});

after(() => temp?.dispose());

/** The path as the harness builds it, each step (and the SDK's handler) noting every call it receives. */
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
  const { interceptors, sdk } = requestPathSteps(options);
  const path = compose(
    interceptors.map(({ name, around }) => ({
      name,
      around: (below: A2ARequestHandler) => {
        const handler = around(below);
        return note(name, handler, (method) => handler.intercepts(method as never));
      },
    })),
    // A handler in front of the SDK's, not the SDK's own methods: those also call each other.
    note('sdk', forwarding(sdk), () => true),
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
    if (step !== 'sdk') calls[step]! += 1;
  }
  return calls;
}

describe('the request path', () => {
  it('is one ordered list, outermost first, and its comment lists the same order', (t) => {
    const path = buildRequestPath(options);
    t.diagnostic(`request path: ${path.order.join(' → ')} → the SDK's DefaultRequestHandler`);
    assert.deepEqual(path.order, ORDER);
    const source = readFileSync(new URL('../../src/request-path.ts', import.meta.url), 'utf8');
    const comment = source.slice(0, source.indexOf('export function requestPathSteps'));
    const documented = [...comment.slice(comment.lastIndexOf('/**')).matchAll(/^ \* - `(\w+)`:/gm)].map((m) => m[1]);
    assert.deepEqual(documented, ORDER);
    assert.equal(HARNESS_TURNS_ENTRY, 'singleTurn');
  });

  it('takes each method only through the steps that do something for it', (t) => {
    const path = buildRequestPath(options);
    for (const method of REQUEST_METHODS) t.diagnostic(`${method}: ${path.pathOf(method).join(' → ')}`);
    assert.deepEqual(path.pathOf('sendMessage'), ['errorMapping', 'commands', 'blockingAsStream']);
    assert.deepEqual(path.pathOf('sendMessageStream'), [
      'errorMapping',
      'commands',
      'idempotency',
      'singleTurn',
      'trackedTurns',
    ]);
    assert.deepEqual(path.pathOf('getTask'), ['errorMapping', 'commands']);
    assert.deepEqual(path.pathOf('cancelTask'), ['errorMapping', 'commands', 'cancellation']);
    assert.deepEqual(path.pathOf('resubscribe'), ['errorMapping', 'commands', 'subscriptions']);
    assert.deepEqual(path.pathOf('getAgentCard'), ['transportCard', 'commands']);
  });

  it('a blocking send passes each step once: as a send down to blockingAsStream, as a stream below it', async () => {
    const { path, seen } = countedPath();
    const first = (await path.handler.sendMessage(send('first'), callContext())) as Task;
    assert.equal(first.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const turn = [
      'errorMapping.sendMessage',
      'commands.sendMessage',
      'blockingAsStream.sendMessage',
      'idempotency.sendMessageStream',
      'singleTurn.sendMessageStream',
      'trackedTurns.sendMessageStream',
      'sdk.sendMessageStream',
      // The answer: the stored task, read from the SDK's handler without going down the path again.
      'sdk.getTask',
    ];
    assert.deepEqual(seen, turn);

    // On an existing task too, where singleTurn reserves the task.
    seen.length = 0;
    const second = (await path.handler.sendMessage(send('second', first), callContext())) as Task;
    assert.equal(second.id, first.id);
    assert.equal(textOf(second.status?.message), 'done');
    assert.deepEqual(seen, turn);
    assert.deepEqual(callsPerStep(seen), {
      errorMapping: 1,
      transportCard: 0,
      commands: 1,
      blockingAsStream: 1,
      idempotency: 1,
      subscriptions: 0,
      singleTurn: 1,
      cancellation: 0,
      trackedTurns: 1,
    });
  });

  it('a command reads its task from the SDK handler, not down the path again', async () => {
    const { path, seen } = countedPath();
    const task = (await path.handler.sendMessage(send('first'), callContext())) as Task;
    seen.length = 0;
    const answer = (await path.handler.sendMessage(send('/ping', task), callContext())) as Task;
    assert.equal(textOf(answer.status?.message), 'pong');
    assert.deepEqual(seen, ['errorMapping.sendMessage', 'commands.sendMessage', 'sdk.getTask']);
  });

  it('refuses two steps of one name, and an entry point it does not have', () => {
    const { interceptors, sdk } = requestPathSteps(options);
    assert.throws(() => compose([...interceptors, interceptors[0]!], sdk), /named errorMapping/);
    assert.throws(() => compose(interceptors, sdk).from('nowhere'), /no step named nowhere/);
  });

  it(`the harness's own turns enter at ${HARNESS_TURNS_ENTRY}, below the message claims`, async () => {
    const { path, seen } = countedPath();
    const turns = path.from(HARNESS_TURNS_ENTRY);
    const events = [];
    for await (const event of turns.sendMessageStream(send('a sub-task'), callContext())) events.push(event);
    assert.equal(events.at(-1)?.payload?.$case, 'statusUpdate');
    assert.deepEqual(seen, ['singleTurn.sendMessageStream', 'trackedTurns.sendMessageStream', 'sdk.sendMessageStream']);
  });
});
