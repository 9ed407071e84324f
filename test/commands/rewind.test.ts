/**
 * CMD-37: `/rewind n` decides on the task as it read it, and its recheck, run under the task's
 * write lock just before the mark is stored, refuses when the task moved on since: a turn
 * started, or the conversation changed.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { ServerCallContext } from '@a2a-js/sdk/server';
import type { CommandResult } from '../../src/commands/index.js';
import { rewindCommand } from '../../src/commands/builtins/rewind.js';
import { conversationRewinds } from '../../src/runtime/conversation-rewinds.js';
import { COMMAND_KEY, REPLY_ERROR_KEY, rewindOf, textPart } from '../../src/wire.js';

let n = 0;
function message(role: Role, text: string, metadata: Record<string, unknown> = {}): Message {
  return {
    messageId: `m${++n}`,
    taskId: 't',
    contextId: 'c',
    role,
    parts: [textPart(text)],
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}

function task(history: Message[], state = TaskState.TASK_STATE_INPUT_REQUIRED): Task {
  return {
    id: 't',
    contextId: 'c',
    status: { state, message: undefined, timestamp: '' },
    history,
    artifacts: [],
    metadata: {},
  };
}

async function run(args: string, history: Message[], running = false) {
  const command = message(Role.ROLE_USER, `/rewind ${args}`, { [COMMAND_KEY]: 'rewind' });
  const definition = rewindCommand({ isRunning: async () => running }, conversationRewinds);
  const result = (await definition.handler({
    name: 'rewind',
    args,
    task: task([...history, command]),
    message: command,
    callContext: new ServerCallContext(),
  })) as CommandResult;
  return { result, command };
}

describe('/rewind n, rechecked under the write lock (CMD-37)', () => {
  const history = [
    message(Role.ROLE_USER, 'one'),
    message(Role.ROLE_AGENT, 're: one'),
    message(Role.ROLE_USER, 'two'),
    message(Role.ROLE_AGENT, 're: two'),
  ];

  it('CMD-37: stores one mark hiding the point and what followed, and the recheck lets it through when nothing moved', async () => {
    const { result, command } = await run('1', history);
    assert.equal(result.records?.length, 1);
    assert.deepEqual(rewindOf(result.records![0]!), { to: history[2]!.messageId, hidden: ['m3', 'm4'] });
    assert.equal(result.recheck!(task([...history, command])), undefined);
  });

  it('CMD-37: the recheck refuses (turn_running) when a turn started since the task was read', async () => {
    const { result, command } = await run('1', history);
    const refused = result.recheck!(task([...history, command], TaskState.TASK_STATE_WORKING));
    assert.equal(refused?.data?.[REPLY_ERROR_KEY], 'turn_running');
    assert.equal(refused?.records, undefined, 'no mark');
  });

  it('CMD-37: the recheck refuses (conversation_changed) when a message arrived since', async () => {
    const { result, command } = await run('1', history);
    const later = message(Role.ROLE_USER, 'three');
    const refused = result.recheck!(task([...history, later, command]));
    assert.equal(refused?.data?.[REPLY_ERROR_KEY], 'conversation_changed');
    assert.equal(refused?.records, undefined, 'no mark');
  });

  it('CMD-37: the listing shows the 20 newest points, newest first', async () => {
    const long = Array.from({ length: 25 }, (_, i) => message(Role.ROLE_USER, `message ${i + 1}`));
    const { result } = await run('', long);
    const points = result.data?.points as Array<{ n: number; preview: string }>;
    assert.equal(points.length, 20);
    assert.deepEqual(points[0], { n: 1, messageId: long[24]!.messageId, preview: 'message 25', text: 'message 25' });
    assert.equal(points[19]!.preview, 'message 6');
  });

  it('CMD-37: refused at once while a turn runs', async () => {
    const { result } = await run('1', history, true);
    assert.equal(result.data?.[REPLY_ERROR_KEY], 'turn_running');
    assert.equal(result.records, undefined);
  });
});
