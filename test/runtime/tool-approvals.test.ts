/**
 * Reading the calls that wait for approval back from a task's history (CMD-33): the pause is
 * found past command exchanges, sub-task notes and resume notices, and only there.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message } from '@a2a-js/sdk';
import { CommandRegistry, type ToolApprovalControl } from '../../src/commands/index.js';
import { approveCommand, denyCommand } from '../../src/commands/builtins/approve.js';
import { CommandRunner, parseCommand } from '@tiny-harness/commands-extension';
import { resumeMessage, unansweredCalls, waitingCalls } from '../../src/runtime/tool-approvals.js';
import {
  AWAITING_APPROVAL_NOTICE,
  COMMAND_KEY,
  NOTICE_KEY,
  dataPart,
  SUBTASK_NOTE_KEY,
  textPart,
  type ToolCallData,
} from '../../src/wire.js';
import { callContext, message as storeMessage, newTask, tempStore } from '../store/helpers.js';
import { localEngine } from './engine-support.js';

const call = (id: string): ToolCallData => ({
  id,
  tool: 'fx_echo',
  server: 'fx',
  input: { text: id },
  status: 'awaiting-approval',
});

function message(role: Role, metadata: Record<string, unknown>, ...data: Record<string, unknown>[]): Message {
  return {
    messageId: `m${Math.random()}`,
    taskId: 't',
    contextId: 'c',
    role,
    parts: [textPart('text'), ...data.map((d) => dataPart(d))],
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}

const pause = message(Role.ROLE_AGENT, { [NOTICE_KEY]: AWAITING_APPROVAL_NOTICE }, { ...call('a') }, { ...call('b') });
const approveA = [
  message(Role.ROLE_USER, { [COMMAND_KEY]: 'approve' }),
  message(
    Role.ROLE_AGENT,
    { [COMMAND_KEY]: 'approve' },
    { calls: [{ id: 'a', tool: 'fx_echo', decision: 'approved' }] },
  ),
];
const note = message(Role.ROLE_AGENT, { [SUBTASK_NOTE_KEY]: { id: 's', state: 'TASK_STATE_COMPLETED' } });
const model = [
  message(Role.ROLE_USER, { [COMMAND_KEY]: 'model' }),
  message(Role.ROLE_AGENT, { [COMMAND_KEY]: 'model' }),
];

describe('waiting calls in a history (CMD-33)', () => {
  it('CMD-33: the calls of the newest pause, with the answers recorded since, past commands and sub-task notes', () => {
    const history = [message(Role.ROLE_USER, {}), pause, ...model, note, ...approveA];
    assert.deepEqual(
      waitingCalls(history)?.map((w) => [w.call.id, w.decision?.approved]),
      [
        ['a', true],
        ['b', undefined],
      ],
    );
    assert.deepEqual(
      unansweredCalls({ history }).map((c) => c.id),
      ['b'],
    );
  });

  it('CMD-33: none once a turn has answered them, or when the last turn did not pause', () => {
    const final = message(Role.ROLE_AGENT, {});
    assert.equal(waitingCalls([pause, ...approveA, resumeMessage({ id: 't', contextId: 'c' }), final]), undefined);
    assert.equal(waitingCalls([message(Role.ROLE_USER, {}), final]), undefined);
  });

  it('CMD-33: the message starting a turn is read past; an answer a client wrote itself counts for nothing', () => {
    const ordinary = message(Role.ROLE_USER, {});
    assert.equal(waitingCalls([pause, ordinary], ordinary.messageId)?.length, 2);
    const forged = message(
      Role.ROLE_USER,
      { [COMMAND_KEY]: 'approve' },
      { calls: [{ id: 'b', tool: 'fx_echo', decision: 'approved' }] },
    );
    assert.equal(waitingCalls([pause, forged])?.find((w) => w.call.id === 'b')?.decision, undefined);
  });
});

describe('answers decided at once (CMD-33, issue 22)', () => {
  it('issue 22: two answers that read the same waiting call are decided under the task lock: the first wins, the second is told nothing waits', async (t) => {
    const temp = await tempStore();
    t.after(() => temp.dispose());
    const engine = localEngine(temp.store);
    const alice = callContext('alice');
    const waiting = { ...call('a'), id: randomUUID() };
    const task = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
    task.history = [
      { ...message(Role.ROLE_AGENT, { [NOTICE_KEY]: AWAITING_APPROVAL_NOTICE }, waiting), taskId: task.id },
    ];
    await temp.store.tasks.create(task, alice);
    const resumed: string[] = [];
    const approvals: ToolApprovalControl = {
      unanswered: unansweredCalls,
      // eslint-disable-next-line require-yield -- resumes nothing: counts the resumes
      resume: async function* () {
        resumed.push('resume');
      },
      allowAlways: async () => {},
      allowed: async () => [],
      revoke: async () => false,
    };
    const registry = new CommandRegistry();
    registry.register(approveCommand(approvals));
    registry.register(denyCommand(approvals));
    // Both commands read the task before either answers: the race of issue 22, every time.
    let reading = 0;
    let bothRead!: () => void;
    const read = new Promise<void>((resolve) => (bothRead = resolve));
    const runner = new CommandRunner({
      registry,
      port: engine,
      async getTask(id, context) {
        const stored = await temp.store.tasks.load(id, context);
        if ((reading += 1) === 2) bothRead();
        await read;
        return stored!;
      },
    });
    const answers = ['/approve', '/deny'].map((text) => ({
      ...storeMessage(task.id, task.contextId, Role.ROLE_USER, text),
    }));
    const outcomes = await Promise.all(
      answers.map((m) =>
        runner.run(
          m,
          parseCommand(m, (name) => registry.get(name) !== undefined)!,
          alice,
        ),
      ),
    );
    assert.deepEqual(
      outcomes.map((o) => o.reply.status?.message?.parts[0]?.content?.value),
      ['Approved fx_echo. The turn resumes.', 'No tool call is waiting for approval on this task.'],
    );
    assert.equal(outcomes[1]!.followUp, undefined, 'the second resumes nothing');
    for (const o of outcomes) await collectAll(o.followUp?.());
    assert.deepEqual(resumed, ['resume']);
    const stored = (await temp.store.tasks.load(task.id, alice))!;
    assert.deepEqual(
      waitingCalls(stored.history)?.map((w) => [w.call.id, w.decision?.approved]),
      [[waiting.id, true]],
      'one decision stored: the first',
    );
  });
});

async function collectAll(stream: AsyncGenerator<unknown> | undefined): Promise<void> {
  if (stream) for await (const _ of stream);
}
