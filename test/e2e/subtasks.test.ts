import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { collect, dataOf, send, startTestHarness, textOf, TRANSPORTS, type TestHarness } from './support.js';
import { poll } from '../support/wait.js';

const SUBTASKS_KEY = 'tiny-harness/subtasks';
let h: TestHarness;

before(async () => {
  h = await startTestHarness({
    script: {
      // Instructions that mention "slowly" stream for a few seconds, so they can be canceled.
      reply: (body) => {
        const last = JSON.stringify(body.messages.at(-1));
        if (last.includes('slowly')) return Array.from({ length: 100 }, (_, i) => `step${i}`).join(' ');
        if (last.includes('a while'))
          return `Done after a while: ${Array.from({ length: 15 }, (_, i) => `w${i}`).join(' ')}`;
        return `Done: ${last.length} chars considered.`;
      },
      chunkDelayMs: 30,
      fail: (body) =>
        JSON.stringify(body.messages.at(-1)).includes('impossible')
          ? { kind: 'status', status: 500, message: 'model crashed' }
          : undefined,
    },
    config: { modelTimeoutMs: 5000 },
  });
});

after(async () => {
  await h?.close();
});

async function ended(client: Client, id: string): Promise<Task> {
  return poll(`the end of task ${id}`, async () => {
    const task = await client.getTask({ tenant: '', id, historyLength: undefined });
    return [TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED].includes(
      task.status!.state,
    )
      ? task
      : undefined;
  });
}

for (const transport of TRANSPORTS) {
  describe(`sub-tasks over ${transport}`, () => {
    it('CMD-30: /spawn replies at once with task_ref; the sub-task is a full task that names its parent', async () => {
      const client = await h.client(transport);
      const parent = await send(client, 'Hello');
      const replied = await send(client, '/spawn summarise the greeting', { taskId: parent.id });
      const reply = replied.status!.message!;
      const ref = reply.metadata?.task_ref as string;
      assert.match(ref, /^[0-9a-f-]{36}$/);
      assert.deepEqual(reply.metadata, { command: 'spawn', task_ref: ref });
      assert.deepEqual(reply.referenceTaskIds, [ref]);
      assert.equal(dataOf(reply).taskId, ref);
      assert.equal(replied.status!.state, TaskState.TASK_STATE_INPUT_REQUIRED, 'the parent keeps its state');

      const child = await ended(client, ref);
      assert.equal(child.status!.state, TaskState.TASK_STATE_COMPLETED);
      assert.equal(child.contextId, parent.contextId);
      assert.deepEqual(child.metadata?.[SUBTASKS_KEY], { parent: parent.id });
      assert.match(textOf(child.status!.message), /^Done: /);
      assert.equal(child.artifacts.length, 1, 'the result is an artifact');
      assert.equal(child.artifacts[0]!.parts.map((p: any) => p.content?.value).join(''), textOf(child.status!.message));

      const stored = await client.getTask({ tenant: '', id: parent.id, historyLength: undefined });
      assert.deepEqual(stored.metadata?.[SUBTASKS_KEY], { children: [ref] });
      assert.ok(
        !('command' in (stored.metadata ?? {})) && !('task_ref' in (stored.metadata ?? {})),
        'CMD-6 holds for task_ref',
      );
      const listed = await client.listTasks({
        tenant: '',
        contextId: parent.contextId,
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageSize: 50,
        pageToken: '',
        historyLength: 0,
        statusTimestampAfter: undefined,
        includeArtifacts: false,
      });
      assert.deepEqual(new Set(listed.tasks.map((t) => t.id)), new Set([parent.id, ref]));
    });

    it('CMD-30: the parent hears how the sub-task ended, its model sees it, and /status lists it', async () => {
      const client = await h.client(transport);
      const parent = await send(client, 'Start');
      const replied = await send(client, '/spawn count to three for a while', { taskId: parent.id });
      const ref = replied.status!.message!.metadata!.task_ref as string;
      // Subscribed to the idle parent, a client sees the note arrive (and the stream then closes,
      // as every subscription does after an INPUT_REQUIRED update).
      const subscription = collect(client.resubscribeTask({ tenant: '', id: parent.id }));
      await ended(client, ref);
      const note = await poll('the sub-task note in the parent', async () => {
        const stored = await client.getTask({ tenant: '', id: parent.id, historyLength: undefined });
        return stored.history.find((m) => (m.metadata?.['tiny-harness/subtask-note'] as any)?.id === ref);
      });
      assert.match(textOf(note), new RegExp(`Sub-task ${ref} \\(/spawn\\) completed`));
      const stored = await client.getTask({ tenant: '', id: parent.id, historyLength: undefined });
      assert.equal(stored.status!.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      const status = await send(client, '/status', { taskId: parent.id });
      assert.deepEqual(dataOf(status.status!.message).subtasks, [{ id: ref, state: 'TASK_STATE_COMPLETED' }]);
      await send(client, 'What did the sub-task say?', { taskId: parent.id });
      const sent = JSON.stringify(h.chatRequests().at(-1).messages);
      assert.match(sent, new RegExp(`Sub-task ${ref}`), "the note reaches the parent's model");
      assert.doesNotMatch(sent, /\/spawn count/, 'the command itself does not');
      const events = await subscription;
      const notes = events.filter(
        (e) =>
          e.payload?.$case === 'statusUpdate' &&
          textOf((e.payload.value as any).status.message).startsWith(`Sub-task ${ref}`),
      );
      assert.equal(notes.length, 1, 'the subscriber saw the note as a status update');
    });

    it('CMD-31: canceling a parent cancels its unfinished sub-tasks; SubscribeToTask and CancelTask work on a sub-task', async () => {
      const client = await h.client(transport);
      const parent = await send(client, 'Parent');
      const first = (await send(client, '/spawn work slowly on part one', { taskId: parent.id })).status!.message!
        .metadata!.task_ref as string;
      const second = (await send(client, '/spawn work slowly on part two', { taskId: parent.id })).status!.message!
        .metadata!.task_ref as string;
      const third = (await send(client, '/spawn work slowly on part three', { taskId: parent.id })).status!.message!
        .metadata!.task_ref as string;
      const watching = collect(client.resubscribeTask({ tenant: '', id: first }));
      await client.cancelTask({ tenant: '', id: third, metadata: {} });
      assert.equal(
        (await client.getTask({ tenant: '', id: third, historyLength: 0 })).status!.state,
        TaskState.TASK_STATE_CANCELED,
      );
      const canceled = await client.cancelTask({ tenant: '', id: parent.id, metadata: {} });
      assert.equal(canceled.status!.state, TaskState.TASK_STATE_CANCELED);
      for (const id of [first, second]) {
        assert.equal((await ended(client, id)).status!.state, TaskState.TASK_STATE_CANCELED, id);
      }
      const events = await watching;
      assert.equal(events[0]!.payload!.$case, 'task');
      assert.equal((events.at(-1)!.payload!.value as any).status.state, TaskState.TASK_STATE_CANCELED);
    });

    it('CMD-13: a /spawn retried with the same messageId starts one sub-task', async () => {
      const client = await h.client(transport);
      const parent = await send(client, 'Parent');
      const messageId = crypto.randomUUID();
      const [a, b] = await Promise.all([
        send(client, '/spawn do it once', { taskId: parent.id, messageId }),
        send(client, '/spawn do it once', { taskId: parent.id, messageId }),
      ]);
      const c = await send(client, '/spawn do it once', { taskId: parent.id, messageId });
      const refs = new Set([a, b, c].map((t) => t.status!.message!.metadata!.task_ref));
      assert.equal(refs.size, 1);
      const stored = await client.getTask({ tenant: '', id: parent.id, historyLength: 0 });
      assert.equal((stored.metadata?.[SUBTASKS_KEY] as any).children.length, 1);
    });
  });
}

describe('a sub-task that fails', () => {
  it('CMD-30: ends FAILED with a clear message, and the parent hears it', async () => {
    const client = await h.client('HTTP+JSON');
    const parent = await send(client, 'Parent');
    const ref = (await send(client, '/spawn do the impossible', { taskId: parent.id })).status!.message!.metadata!
      .task_ref as string;
    const child = await ended(client, ref);
    assert.equal(child.status!.state, TaskState.TASK_STATE_FAILED);
    assert.match(textOf(child.status!.message), /fixture:small/);
    assert.doesNotMatch(textOf(child.status!.message), /\/model to switch/, 'a finished sub-task cannot switch models');
    const note = await poll('the sub-task note in the parent', async () => {
      const stored = await client.getTask({ tenant: '', id: parent.id, historyLength: undefined });
      return stored.history.find((m) => (m.metadata?.['tiny-harness/subtask-note'] as any)?.id === ref);
    });
    assert.match(textOf(note), new RegExp(`Sub-task ${ref} \\(/spawn\\) failed: `));
    assert.deepEqual(note.metadata?.['tiny-harness/subtask-note'], { id: ref, state: 'TASK_STATE_FAILED' });
  });
});

describe('spawn arguments', () => {
  it('CMD-12: /spawn without an instruction says what to send, and starts nothing', async () => {
    const client = await h.client('JSONRPC');
    const parent = await send(client, 'Parent');
    const replied = await send(client, '/spawn', { taskId: parent.id });
    assert.match(textOf(replied.status!.message), /Say what the sub-task should do/);
    const stored = await client.getTask({ tenant: '', id: parent.id, historyLength: 0 });
    assert.equal(stored.metadata?.[SUBTASKS_KEY], undefined);
  });
});
