/** CMD-38: how a command's inline turn is decided (free, busy, queued) and which command a turn belongs to. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { CommandUsageError } from '../../src/commands/index.js';
import { HarnessError, isHarnessError } from '../../src/errors.js';
import { CommandTurns, commandOfTurn } from '../../src/runtime/turn/command-turns.js';
import { resumeMessage } from '../../src/runtime/tool-approvals.js';
import { COMMAND_KEY, FROM_COMMAND_KEY, NOTICE_KEY, WHILE_BUSY_KEY, textPart } from '../../src/wire.js';

const task: Task = {
  id: 't1',
  contextId: 'c1',
  status: { state: TaskState.TASK_STATE_INPUT_REQUIRED, message: undefined, timestamp: undefined },
  artifacts: [],
  history: [],
  metadata: {},
};

function message(role: Role, text: string, metadata: Record<string, unknown> = {}): Message {
  return {
    messageId: text,
    taskId: 't1',
    contextId: 'c1',
    role,
    parts: [textPart(text)],
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** A `CommandTurns` on a pretend engine and queue that record what they were sent. */
function turns(busy: boolean, queues = true) {
  const sent: Message[] = [];
  const started: Message[] = [];
  const inline = new CommandTurns({
    engine: {
      isBusy: () => Promise.resolve(busy),
      startTurn: (m) => {
        started.push(m);
        return Promise.resolve({
          taskId: 't1',
          events: (async function* () {})(),
          done: Promise.resolve(),
          detach() {},
        });
      },
    },
    ...(queues && {
      queue: {
        send: (m) => {
          sent.push(m);
          return Promise.resolve((async function* () {})());
        },
      },
    }),
    offer: { list: () => [{ id: 'builtin:echo' }], has: (id) => id === 'builtin:echo', defaultModel: 'builtin:echo' },
    onError: () => {},
  });
  return { inline, sent, started };
}

const callContext = new ServerCallContext({ requestedVersion: '1.0' });
const command = (metadata: Record<string, unknown> = {}) => message(Role.ROLE_USER, '/review a.ts', metadata);

describe('inline command turns (CMD-38)', () => {
  it('CMD-38: a free task: the turn starts with the prompt as its own message, marked with the command and its grants', async () => {
    const { inline, sent } = turns(false);
    const turn = await inline.prepare(task, 'Review a.ts.', {
      callContext,
      label: '/review',
      model: 'echo',
      allowedTools: ['workspace_read'],
      message: command(),
    });
    assert.ok(turn.kind === 'start');
    assert.equal(sent.length, 0, 'nothing runs before the reply is stored');
    for await (const _ of turn.run());
    assert.equal(sent.length, 1);
    assert.equal(sent[0]!.role, Role.ROLE_USER);
    assert.equal(sent[0]!.taskId, 't1');
    assert.deepEqual(sent[0]!.metadata, {
      [FROM_COMMAND_KEY]: { command: '/review', model: 'builtin:echo', allowedTools: ['workspace_read'] },
    });
  });

  it('CMD-38: a busy task: refused as an ordinary message is, or queued as the command message asks', async () => {
    assert.deepEqual(
      await turns(true).inline.prepare(task, 'p', { callContext, label: '/review', message: command() }),
      { kind: 'busy' },
    );
    const { inline, sent } = turns(true);
    const queued = await inline.prepare(task, 'p', {
      callContext,
      label: '/review',
      message: command({ [WHILE_BUSY_KEY]: 'enqueue' }),
    });
    assert.ok(queued.kind === 'queued');
    for await (const _ of queued.run());
    assert.equal(sent[0]!.metadata?.[WHILE_BUSY_KEY], 'enqueue');
    // Without a queue, nothing can wait: busy.
    const alone = turns(true, false);
    assert.equal(
      (
        await alone.inline.prepare(task, 'p', {
          callContext,
          label: '/r',
          message: command({ [WHILE_BUSY_KEY]: 'enqueue' }),
        })
      ).kind,
      'busy',
    );
  });

  it('CMD-38: a model not offered, or a while-busy value not known, is refused before anything starts', async () => {
    const { inline } = turns(false);
    await assert.rejects(
      inline.prepare(task, 'p', { callContext, label: '/r', model: 'nope:x', message: command() }),
      (error) => isHarnessError(error) && (error as HarnessError).code === 'model_unknown',
    );
    await assert.rejects(
      inline.prepare(task, 'p', { callContext, label: '/r', message: command({ [WHILE_BUSY_KEY]: 'sometimes' }) }),
      CommandUsageError,
    );
  });

  it("TOOL-3: a turn's command is its message's, or for a turn resumed after /approve, the message that started the paused turn", () => {
    const from = { command: '/note', allowedTools: ['workspace_write'] };
    const prompt = message(Role.ROLE_USER, 'please write', { [FROM_COMMAND_KEY]: from });
    assert.deepEqual(commandOfTurn([prompt], prompt), from);
    const resume = resumeMessage(task);
    const history = [
      message(Role.ROLE_USER, 'Hi'),
      prompt,
      message(Role.ROLE_AGENT, 'waiting', { [NOTICE_KEY]: 'awaiting-approval' }),
      message(Role.ROLE_USER, '/approve', { [COMMAND_KEY]: 'approve' }),
      message(Role.ROLE_AGENT, 'Approved.', { [COMMAND_KEY]: 'approve' }),
      resume,
    ];
    assert.deepEqual(commandOfTurn(history, resume), from);
    const typed = message(Role.ROLE_USER, 'my own words');
    assert.equal(commandOfTurn([...history.slice(0, 2), typed, resume], resume), undefined);
    assert.equal(commandOfTurn([typed], typed), undefined);
  });
});
