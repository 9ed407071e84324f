/**
 * A2A 1.1's generation rules at the steps level (issue 36; src/runtime/generations-step.ts and
 * the engine's `ifGeneration`): GetTask with `currentGeneration` waits until the task's
 * generation passes it, up to the bound or until the client goes away; a send with
 * `ifGenerationMatch` is refused when the task has moved on; a 1.0 call is as it always was.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role, TaskState, type Message, type SendMessageRequest, type Task } from '@a2a-js/sdk';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { CommandRegistry } from '../../src/commands/index.js';
import {
  compose,
  MessageClaims,
  setClientGoneSignal,
  type Call,
  type ComposedSteps,
  type Step,
  type Stream,
} from '../../src/a2a/index.js';
import { silentLogger } from '../../src/log.js';
import { buildRequestPath } from '../../src/request-path.js';
import { generationsStep } from '../../src/runtime/generations-step.js';
import type { TaskEngine } from '../../src/runtime/engine.js';
import { TaskView } from '../../src/runtime/subtask-metadata.js';
import { baseAgentCard } from '../../src/server/card.js';
import type { TaskSnapshot } from '../../src/ports.js';
import { GENERATION_KEY, WHILE_BUSY_KEY } from '../../src/wire.js';
import { TurnQueue } from '../../src/runtime/turn/turn-queue.js';
import { message, tempStore, type TempStore } from '../store/helpers.js';
import { localEngine, scripted } from './engine-support.js';

const NEVER_MS = 600_000; // a bound no test reaches: were the wait not ended otherwise, the test would hang

let temp: TempStore;
let engine: TaskEngine;
let view: TaskView;
/** Holds a turn whose message says "hold" open until `release` is called. */
let release: () => void = () => {};

function context(version: '1.0' | '1.1'): ServerCallContext {
  return new ServerCallContext({ requestedVersion: version });
}

function send(text: string, task?: Task, fields: Record<string, unknown> = {}): SendMessageRequest {
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
    ...fields,
  } as SendMessageRequest;
}

function generationOfTask(task: Task): number {
  return task.metadata?.[GENERATION_KEY] as number;
}

/** The harness's request path, as the bindings run each call through it; `longPollMs` bounds GetTask's wait. */
function path(longPollMs = NEVER_MS): Pick<ComposedSteps, 'run'> {
  const registry = new CommandRegistry();
  return buildRequestPath({
    engine,
    view,
    feeds: temp.store.feeds,
    claims: new MessageClaims(temp.store.claims),
    registry,
    card: () => baseAgentCard({ httpUrl: 'http://127.0.0.1:0', version: 'test' }),
    log: silentLogger,
    longPollMs,
  }).path;
}

function sendMessage(params: SendMessageRequest, ctx: ServerCallContext): Promise<Message | Task> {
  return path().run({ method: 'sendMessage', params, context: ctx, streaming: false });
}

function sendMessageStream(params: SendMessageRequest, ctx: ServerCallContext): Stream {
  return path().run({ method: 'sendMessageStream', params, context: ctx, streaming: true });
}

function getTask(params: Record<string, unknown>, ctx: ServerCallContext, longPollMs?: number): Promise<Task> {
  return path(longPollMs).run({ method: 'getTask', params: params as never, context: ctx, streaming: false });
}

/** An idle task, answered once. */
async function idleTask(): Promise<Task> {
  return (await sendMessage(send('first'), context('1.0'))) as Task;
}

before(async () => {
  temp = await tempStore();
  view = new TaskView(temp.store.tasks, temp.store.state);
  engine = localEngine(
    temp.store,
    scripted({
      hold: (request) =>
        textOfMessage(request.userMessage) === 'hold'
          ? new Promise<void>((resolve) => (release = resolve))
          : Promise.resolve(),
    }),
    { view },
  );
});

after(() => temp?.dispose());

function textOfMessage(msg: Message): string {
  return msg.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
}

describe('A2A 1.1 GetTask with currentGeneration (issue 36)', () => {
  it('answers at once when the task is past it already', async () => {
    const task = await idleTask();
    const generation = generationOfTask(task);
    const got = await getTask({ tenant: '', id: task.id, currentGeneration: generation - 1 }, context('1.1'));
    assert.equal(generationOfTask(got), generation);
  });

  it('waits until the task moves past it, then answers the task as it then stands', async () => {
    const task = await idleTask();
    const stream = sendMessageStream(send('hold', task), context('1.0'));
    // Read up to WORKING: the turn then holds, and the task's generation stays where it is.
    for await (const event of stream) if (event.payload?.$case === 'statusUpdate') break;
    const held = generationOfTask((await view.read(task.id, context('1.0')))!.task);
    let read!: () => void;
    const wasRead = new Promise<void>((resolve) => (read = resolve));
    const step = generationsStep({
      read: async (id, ctx) => {
        const snapshot = await view.read(id, ctx);
        read();
        return snapshot;
      },
      feeds: temp.store.feeds,
      maxWaitMs: NEVER_MS,
    });
    const waiting = run(step, { tenant: '', id: task.id, currentGeneration: held });
    await wasRead; // the step saw the task at `held`: it answers only once something is written after it
    release();
    const got = await waiting;
    assert.ok(generationOfTask(got) > held, `${generationOfTask(got)} > ${held}`);
  });

  it('at the bound, answers the task as it stands', async () => {
    const task = await idleTask();
    const generation = generationOfTask(task);
    const got = await getTask({ tenant: '', id: task.id, currentGeneration: generation }, context('1.1'), 1);
    assert.equal(generationOfTask(got), generation);
  });

  it('when the client goes away, stops waiting', async () => {
    const task = await idleTask();
    const generation = generationOfTask(task);
    const gone = new AbortController();
    const ctx = context('1.1');
    setClientGoneSignal(ctx, gone.signal);
    const waiting = getTask({ tenant: '', id: task.id, currentGeneration: generation }, ctx);
    gone.abort();
    assert.equal(generationOfTask(await waiting), generation);
  });

  it('a task not found is refused as ever', async () => {
    await assert.rejects(getTask({ tenant: '', id: 'no-such-task', currentGeneration: 1 }, context('1.1')), {
      name: 'TaskNotFoundError',
    });
  });

  it('a 1.0 call does not wait, and the handler never sees the field', async () => {
    const task = await idleTask();
    const generation = generationOfTask(task);
    const got = await getTask({ tenant: '', id: task.id, currentGeneration: generation }, context('1.0'));
    assert.equal(generationOfTask(got), generation);
    const seen: unknown[] = [];
    const step = generationsStep({
      read: (id, ctx) => view.read(id, ctx),
      feeds: temp.store.feeds,
      maxWaitMs: NEVER_MS,
    });
    const composed = compose([step], (call) => {
      seen.push(call.params);
      return Promise.resolve(task);
    });
    await composed.run({
      method: 'getTask',
      params: { tenant: '', id: task.id, currentGeneration: generation } as never,
      context: context('1.0'),
      streaming: false,
    });
    assert.deepEqual(seen, [{ tenant: '', id: task.id }]);
  });
});

/** `GetTask` down the step alone, answered by the view. */
function run(step: Step, params: Record<string, unknown>): Promise<Task> {
  const composed = compose(
    [step],
    async (call: Call) => (await view.read((call.params as { id: string }).id, call.context))!.task,
  );
  return composed.run({ method: 'getTask', params: params as never, context: context('1.1'), streaming: false });
}

describe('A2A 1.1 SendMessage with ifGenerationMatch (issue 36)', () => {
  it('is refused with TaskGenerationMismatchError when the task has moved on, and nothing is stored', async () => {
    const task = await idleTask();
    const generation = generationOfTask(task);
    await assert.rejects(
      sendMessage(send('again', task, { ifGenerationMatch: generation - 1 }), context('1.1')),
      (error: Error & { reason?: string; metadata?: Record<string, string> }) => {
        assert.equal(error.name, 'TaskGenerationMismatchError');
        assert.equal(error.reason, 'TASK_GENERATION_MISMATCH');
        assert.deepEqual(error.metadata, {
          taskId: task.id,
          expectedGeneration: String(generation - 1),
          currentGeneration: String(generation),
        });
        return true;
      },
    );
    assert.equal((await view.read(task.id, context('1.0')))!.generation, generation);
  });

  it('runs the turn when it is the task generation', async () => {
    const task = await idleTask();
    const answer = (await sendMessage(
      send('again', task, { ifGenerationMatch: generationOfTask(task) }),
      context('1.1'),
    )) as Task;
    assert.equal(answer.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.ok(generationOfTask(answer) > generationOfTask(task));
  });

  it('is ignored for a new task, as the draft says', async () => {
    const answer = (await sendMessage(send('new', undefined, { ifGenerationMatch: 42 }), context('1.1'))) as Task;
    assert.equal(answer.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
  });

  it('a 1.0 call is not checked: the turn runs', async () => {
    const task = await idleTask();
    const answer = (await sendMessage(send('again', task, { ifGenerationMatch: 0 }), context('1.0'))) as Task;
    assert.equal(answer.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
  });

  it('is never queued behind a running turn: refused as busy at its generation, as moved on past it', async () => {
    const task = await idleTask();
    const stream = sendMessageStream(send('hold', task), context('1.0'));
    for await (const event of stream) if (event.payload?.$case === 'statusUpdate') break;
    const held = (await view.read(task.id, context('1.0')))!.generation;
    const queue = new TurnQueue({
      engine,
      records: temp.store.queue,
      view,
      feeds: temp.store.feeds,
      maxPerTask: 10,
      onError: () => {},
    });
    const queued = () => {
      const msg = message(task.id, task.contextId, Role.ROLE_USER, 'behind');
      msg.metadata = { [WHILE_BUSY_KEY]: 'enqueue' };
      return msg;
    };
    await assert.rejects(queue.send(queued(), context('1.1'), { ifGeneration: held }), { code: 'turn_in_progress' });
    await assert.rejects(queue.send(queued(), context('1.1'), { ifGeneration: held - 1 }), {
      code: 'task_generation_mismatch',
    });
    assert.deepEqual(await temp.store.queue.list(task.id), [], 'nothing was queued');
    release();
  });

  it('is checked again once the turn holds the task: a write between the read and the lease refuses it', async () => {
    const task = await idleTask();
    const generation = generationOfTask(task);
    let reads = 0;
    // The task as first read is at `generation`; by the time the lease is taken, one more event was written.
    const moving = {
      read: async (id: string, ctx: ServerCallContext): Promise<TaskSnapshot | undefined> => {
        const snapshot = await view.read(id, ctx);
        return snapshot && reads++ > 0 ? { ...snapshot, generation: snapshot.generation + 1 } : snapshot;
      },
    };
    const racing = localEngine(temp.store, scripted(), { view: moving });
    const msg = message(task.id, task.contextId, Role.ROLE_USER, 'raced');
    await assert.rejects(racing.startTurn(msg, context('1.1'), { ifGeneration: generation }), {
      name: 'HarnessError',
      code: 'task_generation_mismatch',
    });
    assert.equal(await racing.isBusy(task.id), false, 'the lease was given back');
  });
});
