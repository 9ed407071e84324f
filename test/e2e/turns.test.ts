import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState } from '@a2a-js/sdk';
import { CONTEXT_CUT_NOTICE, NOTICE_KEY } from '../../src/wire.js';
import { collect, dataOf, send, startTestHarness, textOf, type TestHarness, sendStream } from './support.js';

let h: TestHarness;

before(async () => {
  h = await startTestHarness({
    script: {
      reply: (body) =>
        JSON.stringify(body.messages.at(-1)).includes('slow')
          ? 'one two three four five six seven eight nine ten'
          : 'fine',
      chunkDelayMs: 40,
      fail: (body) =>
        JSON.stringify(body.messages.at(-1)).includes('please fail')
          ? { kind: 'status', status: 401, message: 'bad key sk-secret123456' }
          : undefined,
      // A turn to be canceled streams two chunks, then waits for ever: only CancelTask can end it.
      hold: (body) =>
        JSON.stringify(body.messages.at(-1)).includes('to be canceled')
          ? { afterChunks: 2, until: new Promise(() => {}) }
          : undefined,
    },
  });
});

after(async () => {
  await h?.close();
});

describe('model turns', () => {
  it('streams the reply as artifact updates and ends waiting for input with the whole reply', async () => {
    const client = await h.client('JSONRPC');
    const events = await collect(sendStream(client, 'a slow answer please'));
    const kinds = events.map((e) => e.payload?.$case);
    assert.equal(kinds[0], 'task');
    assert.ok(kinds.filter((k) => k === 'artifactUpdate').length >= 10);
    const final = events.at(-1)!.payload!.value as any;
    assert.equal(final.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(textOf(final.status.message), 'one two three four five six seven eight nine ten');
    const sent = h.chatRequests().at(-1);
    assert.equal(sent.messages[0].role, 'system');
    assert.equal(sent.stream, true);
  });

  it('a provider failure ends the turn with a message naming the failure and /model, not a dead task', async () => {
    const client = await h.client('HTTP+JSON');
    const task = await send(client, 'please fail');
    assert.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const text = textOf(task.status?.message);
    assert.match(text, /fixture:small/);
    assert.match(text, /\/model/);
    assert.doesNotMatch(text, /sk-secret/);
    const next = await send(client, 'and now?', { taskId: task.id });
    assert.equal(textOf(next.status?.message), 'fine');
  });

  it('CancelTask aborts the running turn and the provider request', async () => {
    const client = await h.client('GRPC');
    const abortedBefore = h.model.aborted;
    const stream = sendStream(client, 'slow, to be canceled');
    const first = await stream.next();
    const taskId = (first.value as any).payload.value.id;
    // Cancel once the model is streaming: the provider request is open.
    let next = await stream.next();
    while (!next.done && next.value.payload?.$case !== 'artifactUpdate') next = await stream.next();
    assert.equal(next.done, false, 'the turn streamed before it ended');
    const rest = collect(stream);
    const canceled = await client.cancelTask({ tenant: '', id: taskId, metadata: {} });
    assert.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED);
    const events = await rest;
    assert.equal((events.at(-1)!.payload!.value as any).status.state, TaskState.TASK_STATE_CANCELED);
    const finals = events.filter(
      (event) =>
        event.payload?.$case === 'statusUpdate' &&
        event.payload.value.status?.state !== TaskState.TASK_STATE_WORKING &&
        event.payload.value.status?.state !== TaskState.TASK_STATE_SUBMITTED,
    );
    assert.equal(finals.length, 1, 'one final status');
    await h.model.waitForAborted(abortedBefore + 1);
  });

  it('CancelTask on an idle task answers at once', async () => {
    const client = await h.client('JSONRPC');
    const task = await send(client, 'hi');
    const canceled = await client.cancelTask({ tenant: '', id: task.id, metadata: {} });
    assert.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED);
  });

  it('ListTasks and GetTask see the tasks', async () => {
    const client = await h.client('HTTP+JSON');
    const task = await send(client, 'listed');
    const got = await client.getTask({ tenant: '', id: task.id, historyLength: undefined });
    assert.equal(got.id, task.id);
    const listed = await client.listTasks({
      tenant: '',
      contextId: task.contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 10,
      pageToken: '',
      historyLength: undefined,
      statusTimestampAfter: undefined,
      includeArtifacts: true,
    });
    assert.deepEqual(
      listed.tasks.map((t) => t.id),
      [task.id],
    );
  });
});

describe('a conversation longer than the context budget', () => {
  it("CMD-36: without compaction, sends the model only the newest messages that fit its provider's contextChars, with the system prompt, and says so", async () => {
    const small = await startTestHarness({
      config: (baseURL) => ({
        contextChars: 100_000, // the provider's own budget wins
        systemPrompt: 'Be brief.',
        compact: { auto: false }, // the cut alone, as when no summary can be made
        providers: { fixture: { type: 'openai-compatible', baseURL, models: ['small'], contextChars: 1000 } },
      }),
      script: { reply: () => 'ok' },
    });
    try {
      const client = await small.client('JSONRPC');
      const words = (n: number) => `message ${n} ${'x'.repeat(290)}`; // 300 characters each
      let task = await send(client, words(1));
      const answers = [task];
      for (let n = 2; n <= 6; n += 1) {
        task = await send(client, words(n), { taskId: task.id, contextId: task.contextId });
        answers.push(task);
      }
      const sent = small.chatRequests().at(-1).messages as Array<{ role: string; content: string }>;
      assert.equal(sent[0]?.role, 'system');
      const conversation = sent.slice(1);
      // 300 + 2 + 300 + 2 + 300 = 904 characters: messages 4, 5 and 6 and the replies between them.
      assert.deepEqual(
        conversation.map((m) => (m.role === 'user' ? m.content.slice(0, 9) : m.content)),
        ['message 4', 'ok', 'message 5', 'ok', 'message 6'],
      );
      const stored = await client.getTask({ tenant: '', id: task.id, historyLength: undefined });
      const cuts = stored.history.filter((m) => m.metadata?.[NOTICE_KEY] === CONTEXT_CUT_NOTICE);
      // From the fourth turn on (9 + 4 × 300 + 3 × 2 > 1000), each says what it left out.
      assert.deepEqual(
        cuts.map((m) => dataOf(m)),
        [{ cut: 2 }, { cut: 4 }, { cut: 6 }],
      );
      assert.match(textOf(cuts.at(-1)), /its oldest 6 messages were left out of this turn\. Send \/compact/);
      assert.equal(stored.history.length - cuts.length, 12, 'the task itself keeps the whole conversation');
      assert.deepEqual(
        answers[2]!.history.map((m) => textOf(m).slice(0, 9)),
        ['message 3', 'ok'],
        'the answer to SendMessage carries the message sent and the reply',
      );
      assert.deepEqual(
        task.history.map((m) => textOf(m).slice(0, 9)),
        ['The conve', 'ok'],
        "a cut turn's answer: its last two messages, the notice and the reply",
      );
    } finally {
      await small.close();
    }
  });
});
