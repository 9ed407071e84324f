/**
 * A blocking `SendMessage` (`HarnessRequestHandler.sendMessage`): run as the turn's stream and
 * answered with the task as stored once the turn has ended, with the history `historyLength`
 * asks for (unset: the message and its reply, `DEFAULT_ANSWER_HISTORY`); with
 * `returnImmediately`, once the turn's first event is stored.
 */
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role, TaskState, type Message, type SendMessageRequest, type Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { DEFAULT_ANSWER_HISTORY } from '../../src/commands/index.js';
import { HarnessRequestHandler } from '../../src/runtime/request-handler.js';
import { TaskView } from '../../src/runtime/subtask-metadata.js';
import { callContext, message, tempStore, type TempStore } from '../store/helpers.js';
import { gate, localEngine, readAll, scripted, textOfMessage } from './engine-support.js';
import { TurnQueue } from '../../src/runtime/turn/turn-queue.js';
import { GENERATION_KEY, WHILE_BUSY_KEY } from '../../src/wire.js';

function send(
  text: string,
  options: { task?: Task; historyLength?: number; returnImmediately?: boolean } = {},
): SendMessageRequest {
  const msg: Message = message(options.task?.id ?? '', options.task?.contextId ?? '', Role.ROLE_USER, text);
  return {
    tenant: '',
    message: msg,
    configuration: {
      acceptedOutputModes: [],
      historyLength: options.historyLength,
      returnImmediately: options.returnImmediately ?? false,
      taskPushNotificationConfig: undefined,
    },
    metadata: {},
  } as SendMessageRequest;
}

describe('a blocking send', () => {
  let temp: TempStore;
  let handler: HarnessRequestHandler;
  let held: ReturnType<typeof gate>;
  const alice = callContext('alice');
  beforeEach(async () => {
    temp = await tempStore();
    held = gate();
    held.open();
    const engine = localEngine(
      temp.store,
      scripted({
        hold: (request) => (textOfMessage(request.userMessage) === 'slow' ? held.opened : Promise.resolve()),
      }),
    );
    const view = new TaskView(temp.store.tasks, temp.store.state);
    handler = new HarnessRequestHandler(engine, view, temp.store.feeds, () => ({}) as never);
  });
  afterEach(() => temp.dispose());

  for (const historyLength of [undefined, 1, 0, 10]) {
    it(`a blocking send answers with the stored task, historyLength ${historyLength ?? 'unset'} (unset: ${DEFAULT_ANSWER_HISTORY})`, async () => {
      const asStored = async (answer: Task) => {
        const stored = await handler.getTask(
          { tenant: '', id: answer.id, historyLength: historyLength ?? DEFAULT_ANSWER_HISTORY },
          alice,
        );
        assert.deepEqual(answer, stored, 'the task as stored');
        assert.equal(answer.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      };
      const first = (await handler.sendMessage(send('first', { historyLength }), alice)) as Task;
      await asStored(first);
      const second = (await handler.sendMessage(send('second', { task: first, historyLength }), alice)) as Task;
      await asStored(second);
      assert.equal(textOfMessage(second.status?.message), 'reply to second');
      const expected = historyLength === undefined ? DEFAULT_ANSWER_HISTORY : Math.max(0, Math.min(historyLength, 4));
      assert.equal(second.history.length, expected);
      if (historyLength === undefined)
        assert.deepEqual(
          second.history.map((m) => [m.role, textOfMessage(m)]),
          [
            [Role.ROLE_USER, 'second'],
            [Role.ROLE_AGENT, 'reply to second'],
          ],
          'the message sent and its reply',
        );
      assert.deepEqual(
        second.artifacts.map((a) => a.parts.map((p) => p.content?.value).join('')),
        ['reply to first', 'reply to second'],
      );
    });
  }

  it('returnImmediately answers after the first event is stored, while the turn goes on', async () => {
    held = gate();
    const early = (await handler.sendMessage(send('slow', { returnImmediately: true }), alice)) as Task;
    assert.ok(
      [TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING].includes(early.status!.state),
      'answered before the turn ended',
    );
    const stream = handler.resubscribe({ tenant: '', id: early.id }, alice);
    const snapshot = (await stream.next()).value?.payload?.value as Task;
    assert.equal(snapshot.status?.state, TaskState.TASK_STATE_WORKING, 'the turn still runs');
    held.open();
    let last: unknown;
    for await (const item of stream) last = item.payload?.value;
    assert.equal((last as Task).status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
  });
});

/**
 * Issue 33: a blocking send answers when its own turn has ended, with the task as that end left
 * it. The next turn of its task (a message queued behind it, another interrupt) may open before
 * the answer is read, as it did for 2 of 12 concurrent `interrupt` sends across instances: the
 * answer then said WORKING, with no message. Here the answer's read waits until the next turn
 * has opened, so the race runs the same way every time.
 */
describe('a blocking send whose task moves on before it is answered (issue 33)', () => {
  let temp: TempStore;
  const alice = callContext('alice');
  afterEach(() => temp.dispose());

  it("answers with its own turn's end, never the next turn's WORKING: an interrupt with a message queued behind it", async () => {
    temp = await tempStore();
    const holds = new Map([
      ['first', gate()],
      ['urgent', gate()],
      ['next', gate()],
    ]);
    const engine = localEngine(
      temp.store,
      scripted({
        // Held until let go, or stopped (an interrupt stops the running turn as /stop does).
        hold: (request, turn) =>
          Promise.race([
            holds.get(textOfMessage(request.userMessage))?.opened,
            new Promise((resolve) => turn.abort.signal.addEventListener('abort', resolve, { once: true })),
          ]).then(() => undefined),
      }),
    );
    const view = new TaskView(temp.store.tasks, temp.store.state);
    const queue = new TurnQueue({
      engine,
      records: temp.store.queue,
      view,
      feeds: temp.store.feeds,
      maxPerTask: 10,
      onError: () => {},
    });
    engine.onTurnReleased((taskId) => void queue.run(taskId));
    /** Resolves once the turn of the message queued behind has opened: its task event, then WORKING, stored. */
    let nextOpened!: Promise<void>;
    // The answer's read, held until the next turn has opened (on another instance, it may well be first).
    const answerRead = {
      ...view,
      read: view.read.bind(view),
      readLog: view.readLog.bind(view),
      list: view.list.bind(view),
      load: async (taskId: string, context: ServerCallContext) => {
        await nextOpened;
        return view.load(taskId, context);
      },
    } as unknown as TaskView;
    const handler = new HarnessRequestHandler(
      engine,
      answerRead,
      temp.store.feeds,
      () => ({}) as never,
      undefined,
      queue,
    );

    const running = handler.sendMessageStream(send('first'), alice);
    const task = (await running.next()).value!.payload!.value as Task;
    const follower = await temp.store.feeds.follow(task.id);
    const interrupt = send('urgent', { task });
    interrupt.message!.metadata = { [WHILE_BUSY_KEY]: 'interrupt' };
    const answer = handler.sendMessage(interrupt, alice);
    await readAll(running);
    const behind = send('next', { task });
    behind.message!.metadata = { [WHILE_BUSY_KEY]: 'enqueue' };
    const queued = handler.sendMessageStream(behind, alice);
    await queued.next();
    nextOpened = (async () => {
      let opened = false;
      for (;;) {
        const { event } = (await follower.next())!;
        opened ||= event.kind === 'task' && event.data.history.at(-1)?.messageId === behind.message!.messageId;
        if (opened && event.kind === 'statusUpdate' && event.data.status?.state === TaskState.TASK_STATE_WORKING)
          return;
      }
    })();
    holds.get('urgent')!.open();

    const answered = (await answer) as Task;
    assert.equal(answered.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, 'its own turn ended waiting for input');
    assert.equal(textOfMessage(answered.status?.message), 'reply to urgent');
    assert.deepEqual(
      answered.history.map((m) => textOfMessage(m)),
      ['urgent', 'reply to urgent'],
      'the message sent and its reply',
    );
    const now = await view.load(task.id, alice);
    assert.equal(now?.status?.state, TaskState.TASK_STATE_WORKING, 'the task has moved on: the next turn runs');
    assert.ok(
      Number(answered.metadata?.[GENERATION_KEY]) < Number(now?.metadata?.[GENERATION_KEY]),
      "the answer's generation is its end's",
    );
    holds.get('next')!.open();
    await readAll(queued);
    follower.close();
  });
});
