/**
 * A blocking `SendMessage` (`HarnessRequestHandler.sendMessage`): run as the turn's stream and
 * answered with the task as stored once the turn has ended, with the history `historyLength`
 * asks for (unset: the message and its reply, `DEFAULT_ANSWER_HISTORY`); with
 * `returnImmediately`, once the turn's first event is stored.
 */
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role, TaskState, type Message, type SendMessageRequest, type Task } from '@a2a-js/sdk';
import { DEFAULT_ANSWER_HISTORY } from '../../src/commands/index.js';
import { HarnessRequestHandler } from '../../src/runtime/request-handler.js';
import { TaskView } from '../../src/runtime/subtask-metadata.js';
import { callContext, message, tempStore, type TempStore } from '../store/helpers.js';
import { gate, localEngine, scripted, textOfMessage } from './engine-support.js';

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
