/**
 * Tool calls that wait for a person's approval (CMD-33), end to end: the fixture MCP server
 * over stdio with `approve: ["echo"]`, the fixture model scripted to call its tools, and the
 * answers given through `/approve`, `/deny` and an ordinary message, over each transport.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import { toolCallsOf } from '../../src/wire.js';
import { STDIO_FIXTURE } from '../fixtures/mcp-server.js';
import { assertValidToolCallParts, toolCallsViolation } from '../support/tool-calls-schema.js';
import {
  APPROVE_ECHO,
  callsIn,
  finalOf,
  pause,
  reply,
  statusMessages,
  toolCalls,
  turnEnded,
} from './approval-support.js';
import {
  collect,
  dataOf,
  send,
  startTestHarness,
  textOf,
  TRANSPORTS,
  type TestHarness,
  sendStream,
} from './support.js';
import { poll } from '../support/wait.js';

const states = (events: StreamResponse[]) =>
  events.flatMap((e) => (e.payload?.$case === 'statusUpdate' ? [e.payload.value.status?.state] : []));
/** The tool results the model was sent in its latest request. */
function toolResultsSent(h: TestHarness): string[] {
  return h
    .chatRequests()
    .at(-1)
    .messages.filter((m: any) => m.role === 'tool')
    .map((m: any) => String(m.content));
}

let h: TestHarness;

before(async () => {
  h = await startTestHarness({
    script: { toolCalls, reply },
    config: APPROVE_ECHO,
  });
});

after(async () => {
  await h?.close();
});

describe('tool calls that need approval (CMD-33)', () => {
  for (const transport of TRANSPORTS) {
    it(`CMD-33 (${transport}): a call that needs approval pauses the turn; /approve replies first, state unchanged, then the turn resumes and runs it`, async () => {
      const client = await h.client(transport);
      const paused = await pause(client, 'please echo hello');
      assert.deepEqual(
        paused.waiting.map((c) => [c.tool, c.status]),
        [['fx_echo', 'awaiting-approval']],
        'the status message shows the waiting call',
      );
      assert.match(
        textOf(paused.final.message),
        /fx_echo.*\/approve/s,
        'and says how to answer it, in text any client reads',
      );
      assert.deepEqual(
        callsIn(statusMessages(paused.events)).map((c) => c.status),
        ['awaiting-approval', 'awaiting-approval'],
        'the call is streamed as it is asked for, and shown again by the pause',
      );
      const requestsBefore = h.chatRequests().length;

      const events = await collect(sendStream(client, '/approve', { taskId: paused.taskId }));
      const updates = statusMessages(events);
      const replyIndex = updates.findIndex((m) => m?.metadata?.command === 'approve');
      assert.equal(replyIndex, 1, 'the reply comes first, after the task');
      assert.equal(states(events)[0], TaskState.TASK_STATE_INPUT_REQUIRED, 'the reply leaves the state unchanged');
      assert.deepEqual(dataOf(updates[replyIndex]).calls, [
        { id: paused.waiting[0]!.id, tool: 'fx_echo', decision: 'approved' },
      ]);
      assert.equal(
        toolCallsViolation(dataOf(updates[replyIndex])),
        undefined,
        'the answers are valid against the extension schema',
      );
      assert.ok(assertValidToolCallParts([paused.final.message]) === 1, 'the pause holds the waiting call, valid');
      assert.equal(states(events)[1], TaskState.TASK_STATE_WORKING, 'then the turn resumes');
      assert.deepEqual(
        callsIn(updates.slice(replyIndex + 1)).map((c) => [c.id, c.status]),
        [
          [paused.waiting[0]!.id, 'running'],
          [paused.waiting[0]!.id, 'succeeded'],
        ],
      );
      const final = finalOf(events);
      assert.equal(final.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      assert.equal(textOf(final.message), 'tool said: echo: hello', 'the model was given the result');
      assert.equal(h.chatRequests().length, requestsBefore + 1, 'one model request resumed the turn');
      const sent = h.chatRequests().at(-1).messages;
      assert.ok(
        sent.every(
          (m: any) => !String(m.content ?? '').includes('approve') && !String(m.content ?? '').includes('resumes'),
        ),
        'the model is sent neither the command nor the harness notices',
      );

      const task = await client.getTask({ tenant: '', id: paused.taskId, historyLength: undefined });
      const newest = new Map(callsIn(task.history).map((c) => [c.id, c.status]));
      assert.equal(newest.get(paused.waiting[0]!.id), 'succeeded', 'GetTask shows the call as it ended');
    });
  }

  it('CMD-33: /deny with a reason gives the model an error result saying so; the call never runs', async () => {
    const client = await h.client('JSONRPC');
    const paused = await pause(client, 'please echo secret');
    const answered = await send(client, '/deny not that one', { taskId: paused.taskId });
    assert.equal(
      answered.status?.state,
      TaskState.TASK_STATE_INPUT_REQUIRED,
      'a blocking send returns the reply, state unchanged',
    );
    assert.match(textOf(answered.status?.message), /Denied fx_echo\. The turn resumes\./);
    const task = await turnEnded(client, paused.taskId, answered);
    const ended = callsIn(task.history)
      .filter((c) => c.id === paused.waiting[0]!.id)
      .at(-1)!;
    assert.equal(ended.status, 'canceled');
    assert.equal(ended.output, 'The user denied this call. Reason: not that one');
    assert.deepEqual(toolResultsSent(h), ['The user denied this call. Reason: not that one']);
    assert.ok(!callsIn(task.history).some((c) => c.status === 'running'), 'the call never ran');
  });

  it('CMD-33: an ordinary message while calls wait denies them, and the turn goes on with that message', async () => {
    const client = await h.client('HTTP+JSON');
    const paused = await pause(client, 'please echo first');
    const next = await send(client, 'something else instead', { taskId: paused.taskId });
    assert.equal(next.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const task = await client.getTask({ tenant: '', id: paused.taskId, historyLength: undefined });
    const ended = callsIn(task.history)
      .filter((c) => c.id === paused.waiting[0]!.id)
      .at(-1)!;
    assert.equal(ended.status, 'canceled');
    assert.match(ended.output ?? '', /sent a new message instead/);
    const sent = h.chatRequests().at(-1).messages;
    assert.ok(
      sent.some((m: any) => m.role === 'user' && m.content === 'something else instead'),
      'the model is sent the new message',
    );
    assert.match(textOf(next.status?.message), /^tool said: The user denied this call/);
  });

  it('CMD-33: with several calls waiting, an id answers one; the turn resumes once all have answers', async () => {
    const client = await h.client('JSONRPC');
    const paused = await pause(client, 'echo twice');
    assert.equal(paused.waiting.length, 2);
    const [one, two] = paused.waiting;
    const first = await send(client, `/approve ${one!.id}`, { taskId: paused.taskId });
    assert.match(textOf(first.status?.message), /Approved fx_echo\. The turn resumes once every call has an answer\./);
    assert.ok(textOf(first.status?.message).includes(two!.id), 'the reply names the call still waiting');
    const again = await send(client, `/approve ${one!.id}`, { taskId: paused.taskId });
    assert.match(textOf(again.status?.message), /No call .* is waiting/, 'an answered call is not waiting any more');
    const second = await send(client, `/deny ${two!.id}`, { taskId: paused.taskId });
    assert.match(textOf(second.status?.message), /Denied fx_echo\. The turn resumes\./);
    const task = await turnEnded(client, paused.taskId, second);
    const newest = new Map(callsIn(task.history).map((c) => [c.id, c]));
    assert.equal(newest.get(one!.id)?.status, 'succeeded');
    assert.equal(newest.get(one!.id)?.output, 'echo: one');
    assert.equal(newest.get(two!.id)?.status, 'canceled');
    assert.deepEqual(
      toolResultsSent(h),
      ['echo: one', 'The user denied this call.'],
      'the model gets both results, in the order it asked',
    );
  });

  it('CMD-33: a call that needs no approval runs at once; the one that does waits', async () => {
    const client = await h.client('JSONRPC');
    const paused = await pause(client, 'echo and fail');
    const streamed = callsIn(statusMessages(paused.events));
    // The two calls of one step go at once: only each call's own reports are in order.
    assert.deepEqual(
      streamed.filter((c) => c.tool === 'fx_fail').map((c) => c.status),
      ['running', 'failed'],
    );
    assert.deepEqual(
      streamed.filter((c) => c.tool === 'fx_echo').map((c) => c.status),
      ['awaiting-approval', 'awaiting-approval'],
    );
    const answered = await send(client, '/approve', { taskId: paused.taskId });
    const task = await turnEnded(client, paused.taskId, answered);
    assert.equal(textOf(task.status?.message), 'tool said: echo: after');
  });

  it('CMD-33: /approve and /deny with no call waiting say so and change nothing; a bad id is refused, listing the waiting ones', async () => {
    const client = await h.client('JSONRPC');
    const task = await send(client, 'hello there');
    const approve = await send(client, '/approve', { taskId: task.id });
    assert.equal(textOf(approve.status?.message), 'No tool call is waiting for approval on this task.');
    assert.equal(approve.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const paused = await pause(client, 'please echo x', task.id);
    const wrong = await send(client, '/deny 00000000-0000-4000-8000-000000000000', { taskId: paused.taskId });
    assert.match(textOf(wrong.status?.message), /No call 0{8}-.* is waiting for approval\. Waiting: fx_echo \(id /);
    assert.equal(
      unanswered(await client.getTask({ tenant: '', id: paused.taskId, historyLength: undefined })),
      1,
      'the call still waits',
    );
  });

  it('CMD-33: CancelTask on a task whose calls wait cancels it and closes the calls as canceled', async () => {
    const client = await h.client('GRPC');
    const paused = await pause(client, 'please echo never');
    const canceled = await client.cancelTask({ tenant: '', id: paused.taskId, metadata: {} });
    assert.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED);
    const task = await client.getTask({ tenant: '', id: paused.taskId, historyLength: undefined });
    assert.equal(unanswered(task), 0, 'no call is left waiting');
    assert.deepEqual(
      toolCallsOf(task.status?.message?.parts).map((c) => [c.id, c.status]),
      [[paused.waiting[0]!.id, 'canceled']],
    );
  });

  it('CMD-33: a sub-task pauses too; its parent is told, and once answered the sub-task completes', async () => {
    const client = await h.client('JSONRPC');
    const parent = await send(client, 'a parent');
    const spawned = await send(client, '/spawn please echo child', { taskId: parent.id });
    const child = spawned.status!.message!.metadata!.task_ref as string;
    const notes = (task: Task) =>
      task.history.filter((m) => m.metadata?.['tiny-harness/subtask-note'] !== undefined).map((m) => textOf(m));
    const told = await poll('a note in the parent', async () => {
      const now = await client.getTask({ tenant: '', id: parent.id, historyLength: undefined });
      return notes(now).length > 0 ? notes(now) : undefined;
    });
    assert.match(told[0]!, new RegExp(`Sub-task ${child} .*waiting for approval.*/approve`));
    const paused = await client.getTask({ tenant: '', id: child, historyLength: undefined });
    assert.equal(paused.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(unanswered(paused), 1);
    await send(client, '/approve', { taskId: child });
    const done = await poll('the sub-task completed', async () => {
      const now = await client.getTask({ tenant: '', id: child, historyLength: undefined });
      return now.status?.state === TaskState.TASK_STATE_COMPLETED ? now : undefined;
    });
    assert.equal(textOf(done.status?.message), 'tool said: echo: child');
    const after = await poll('a second note in the parent', async () => {
      const now = notes(await client.getTask({ tenant: '', id: parent.id, historyLength: undefined }));
      return now.length > 1 ? now : undefined;
    });
    assert.match(after[1]!, /completed\. Its result:\ntool said: echo: child/);
  });

  it('CMD-33 / TOOL-5: the card lists /approve, /deny and /permissions, with their argument hints', async () => {
    const card = await (await h.client('JSONRPC')).getAgentCard();
    const commands = card.capabilities?.extensions?.find((e) => e.uri.includes('/commands/'))?.params
      ?.commands as any[];
    const byName = new Map(commands.map((c) => [c.name, c]));
    assert.equal(byName.get('approve')?.argument_hint, '[always] [call-id]');
    assert.equal(byName.get('deny')?.argument_hint, '[call-id] [reason]');
    assert.equal(byName.get('permissions')?.argument_hint, '[revoke <tool>]');
  });
});

describe('approval across a restart (CMD-33)', () => {
  it('CMD-33: calls that waited when the server stopped are answered after it starts again, and the turn resumes', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tiny-harness-approval-'));
    const start = () =>
      startTestHarness({
        dataDir,
        script: { toolCalls, reply },
        config: APPROVE_ECHO,
      });
    try {
      const first = await start();
      let taskId: string;
      try {
        taskId = (await pause(await first.client('JSONRPC'), 'please echo later')).taskId;
      } finally {
        await first.close();
      }
      const second = await start();
      try {
        const client = await second.client('JSONRPC');
        const events = await collect(sendStream(client, '/approve', { taskId }));
        assert.equal(textOf(finalOf(events).message), 'tool said: echo: later');
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('approval and users (CMD-33)', () => {
  let authed: TestHarness;
  before(async () => {
    authed = await startTestHarness({
      script: { toolCalls, reply },
      config: { mcpServers: { fx: { ...STDIO_FIXTURE, cwd: process.cwd(), approve: 'always' } } },
      harness: {
        auth: {
          tokens: new Map([
            ['alice-token', 'alice'],
            ['bob-token', 'bob'],
          ]),
        },
      },
    });
  });
  after(async () => {
    await authed?.close();
  });

  it('CMD-33: another user can neither see nor answer the calls waiting in a task', async () => {
    const alice = await authed.client('JSONRPC', { Authorization: 'Bearer alice-token' });
    const bob = await authed.client('JSONRPC', { Authorization: 'Bearer bob-token' });
    const paused = await pause(alice, 'please echo mine');
    await assert.rejects(send(bob, '/approve', { taskId: paused.taskId }), /not found/i);
    await assert.rejects(bob.getTask({ tenant: '', id: paused.taskId, historyLength: undefined }), /not found/i);
    assert.equal(
      unanswered(await alice.getTask({ tenant: '', id: paused.taskId, historyLength: undefined })),
      1,
      'the call still waits for its owner',
    );
  });
});

/** How many calls of the task still show as waiting for approval (their newest report says so). */
function unanswered(task: Task): number {
  const newest = new Map(callsIn(task.history).map((c) => [c.id, c.status]));
  return [...newest.values()].filter((status) => status === 'awaiting-approval').length;
}
