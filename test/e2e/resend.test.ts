/**
 * CMD-34: a message id is handled once per user. A resend gets the task the message went to, as
 * it stands now (following a turn that still runs), never a second turn; a known id with other
 * content is refused with the protocol's invalid-params error.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import {
  collect,
  send,
  startTestHarness,
  textOf,
  TRANSPORTS,
  userMessage,
  type TestHarness,
  type TransportName,
} from './support.js';

const REPLY = Array.from({ length: 12 }, (_, i) => `w${i}`).join(' ');

let h: TestHarness;

before(async () => {
  h = await startTestHarness({ script: { reply: REPLY, chunkDelayMs: 15 } });
});

after(async () => {
  await h?.close();
});

const turnsRun = () => h.chatRequests().length;
const conflict = (error: any) => error?.name === 'RequestMalformedError' && /already used/.test(error.message);

async function history(client: Client, id: string): Promise<Task> {
  return client.getTask({ tenant: '', id, historyLength: undefined });
}

/** The agent replies a message got: the agent messages right after it in the task's history. */
function agentRepliesTo(task: Task, messageId: string): number {
  const at = task.history.findIndex((m) => m.messageId === messageId);
  assert.ok(at >= 0, `message ${messageId} is in the history`);
  let count = 0;
  for (const m of task.history.slice(at + 1)) {
    if (m.role !== Role.ROLE_AGENT) break;
    count += 1;
  }
  return count;
}

async function taskCount(client: Client): Promise<number> {
  const page = await client.listTasks({
    tenant: '',
    contextId: '',
    status: TaskState.TASK_STATE_UNSPECIFIED,
    pageSize: 100,
    pageToken: '',
    historyLength: 0,
    statusTimestampAfter: undefined,
    includeArtifacts: false,
  });
  return page.totalSize;
}

/** The cases every transport runs: concurrent resends, then a retry once the turn is over. */
function concurrentAndRetried(transport: TransportName, copies: number) {
  it(`CMD-34: ${copies} concurrent sends of one message id run one turn; a later retry runs none, over ${transport}`, async () => {
    const client = await h.client(transport);
    const task = await send(client, '/status');
    const messageId = randomUUID();
    const before = turnsRun();
    const answers = await Promise.all(
      Array.from({ length: copies }, () => send(client, 'Tell me twelve words', { taskId: task.id, messageId })),
    );
    assert.equal(turnsRun(), before + 1, 'one model request');
    assert.deepEqual(new Set(answers.map((a) => a.id)), new Set([task.id]), 'every answer names the task');
    for (const answer of answers) {
      assert.equal(
        answer.status?.state,
        TaskState.TASK_STATE_INPUT_REQUIRED,
        'each answer is the task once the turn has ended',
      );
      assert.equal(textOf(answer.status?.message), REPLY);
    }
    const stored = await history(client, task.id);
    assert.equal(stored.history.filter((m) => m.messageId === messageId).length, 1, 'the message is stored once');
    assert.equal(agentRepliesTo(stored, messageId), 1, 'one agent reply');

    const retried = await send(client, 'Tell me twelve words', { taskId: task.id, messageId });
    assert.equal(turnsRun(), before + 1, 'the retry ran no turn');
    assert.equal(retried.id, task.id);
    assert.equal(
      retried.status?.message?.messageId,
      answers[0]!.status?.message?.messageId,
      'the retry gets the task as it stands: the same reply',
    );
    assert.equal((await history(client, task.id)).history.length, stored.history.length, 'nothing was added');
  });
}

describe('resending a message over JSON-RPC', () => {
  concurrentAndRetried('JSONRPC', 20);

  it('CMD-34: the same message id with other text is refused as invalid params, and the history keeps the first', async () => {
    const client = await h.client('JSONRPC');
    const task = await send(client, 'First words');
    const messageId = randomUUID();
    await send(client, 'The original text', { taskId: task.id, messageId });
    const before = await history(client, task.id);
    const turns = turnsRun();
    await assert.rejects(send(client, 'Some other text', { taskId: task.id, messageId }), conflict);
    await assert.rejects(
      collect(
        client.sendMessageStream({
          tenant: '',
          message: userMessage('Other again', { taskId: task.id, messageId }),
          configuration: undefined,
          metadata: {},
        }),
      ),
      conflict,
    );
    await assert.rejects(
      send(client, '/status', { taskId: task.id, messageId }),
      conflict,
      'a command with a used id is refused too',
    );
    assert.equal(turnsRun(), turns);
    assert.deepEqual(await history(client, task.id), before, 'the task is unchanged');
    const raw = await fetch(`${h.harness.url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'SendMessage',
        params: { message: { messageId, taskId: task.id, role: 'ROLE_USER', parts: [{ text: 'changed' }] } },
      }),
    }).then((r) => r.json());
    assert.equal(raw.error.code, -32602, "the protocol's invalid-params error");
    assert.match(raw.error.message, /messageId was already used for a message with other content/);
  });

  it('CMD-34: concurrent sends of one message id without a task make one task', async () => {
    const client = await h.client('JSONRPC');
    const tasksBefore = await taskCount(client);
    const turns = turnsRun();
    const message = userMessage('A new conversation');
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        client.sendMessage({ tenant: '', message, configuration: undefined, metadata: {} }),
      ),
    );
    const ids = new Set(answers.map((a) => (a as Task).id));
    assert.equal(ids.size, 1, 'every answer names one task');
    assert.equal(await taskCount(client), tasksBefore + 1, 'one task was made');
    assert.equal(turnsRun(), turns + 1, 'one turn ran');
    const [id] = ids;
    const again = (await client.sendMessage({ tenant: '', message, configuration: undefined, metadata: {} })) as Task;
    assert.equal(again.id, id, 'a retry gets the same task');
    assert.equal(await taskCount(client), tasksBefore + 1);
  });

  it('CMD-34: a streaming resend while the turn runs follows that turn to its end; one turn runs', async () => {
    const client = await h.client('JSONRPC');
    const task = await send(client, '/status');
    const message = userMessage('Stream twelve words', { taskId: task.id });
    const turns = turnsRun();
    const first = client.sendMessageStream({ tenant: '', message, configuration: undefined, metadata: {} });
    const opening = await first.next();
    assert.equal(opening.value?.payload?.$case, 'task');
    const [rest, resent] = await Promise.all([
      collect(first),
      collect(client.sendMessageStream({ tenant: '', message, configuration: undefined, metadata: {} })),
    ]);
    assert.equal(turnsRun(), turns + 1, 'one model request');
    assert.equal(resent[0]?.payload?.$case, 'task', 'the resend starts with the task as it stands');
    const last = (events: StreamResponse[]) => events.at(-1)?.payload?.value as any;
    assert.equal(last(resent).status.state, TaskState.TASK_STATE_INPUT_REQUIRED, 'and ends with the turn');
    assert.equal(last(resent).status.message.messageId, last(rest).status.message.messageId, 'with the same reply');
    const stored = await history(client, task.id);
    assert.equal(agentRepliesTo(stored, message.messageId), 1);
  });

  it("CMD-34: a command resent with its id is not run again, and the id is one user's record for turns as for commands", async () => {
    const client = await h.client('JSONRPC');
    const messageId = randomUUID();
    const first = await send(client, '/status', { messageId });
    const again = await send(client, '/status', { messageId });
    assert.equal(again.id, first.id, 'no second task');
    assert.equal(again.status?.message?.messageId, first.status?.message?.messageId, 'the first reply (CMD-13)');
  });
});

for (const transport of TRANSPORTS.filter((t) => t !== 'JSONRPC')) {
  describe(`resending a message over ${transport}`, () => {
    concurrentAndRetried(transport, 5);

    it(`CMD-34: the same message id with other text is refused, over ${transport}`, async () => {
      const client = await h.client(transport);
      const messageId = randomUUID();
      const task = await send(client, 'The original text', { messageId });
      await assert.rejects(send(client, 'Other text', { messageId }), (error: any) =>
        /already used/.test(error?.message),
      );
      assert.equal((await history(client, task.id)).history.filter((m) => textOf(m) === 'Other text').length, 0);
    });
  });
}
