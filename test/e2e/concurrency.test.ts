import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import { UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { collect, send, startTestHarness, textOf, TRANSPORTS, userMessage, type TestHarness } from './support.js';

const WORDS = Array.from({ length: 40 }, (_, i) => `word${i}`);
const REPLY = WORDS.join(' ');

let h: TestHarness;

before(async () => {
  h = await startTestHarness({ script: { reply: REPLY, chunkDelayMs: 25 } });
});

after(async () => {
  await h?.close();
});

function artifactText(events: StreamResponse[]): string {
  return events
    .filter((e) => e.payload?.$case === 'artifactUpdate')
    .map((e) => (e.payload!.value as any).artifact.parts.map((p: any) => p.content?.value ?? '').join(''))
    .join('');
}

for (const transport of TRANSPORTS) {
  describe(`a command during a streamed turn over ${transport}`, () => {
    it('CMD-9: commands are answered at once; the turn loses, repeats and reorders nothing and ends as it would have', async () => {
      const client = await h.client(transport);
      const other = await h.client(transport);
      const task = await send(other, '/model fixture:small');
      const turnStream = client.sendMessageStream({ tenant: '', message: userMessage('Tell me forty words', { taskId: task.id }), configuration: undefined, metadata: {} });
      const turnEvents: StreamResponse[] = [];
      const turnDone = (async () => {
        for await (const event of turnStream) turnEvents.push(event);
      })();
      // Wait until the turn is streaming, then subscribe and send commands meanwhile.
      const deadline = Date.now() + 10000;
      while (!turnEvents.some((e) => e.payload?.$case === 'artifactUpdate')) {
        if (Date.now() > deadline) throw new Error('the turn never started streaming');
        await new Promise((r) => setTimeout(r, 10));
      }
      const subscription = collect(other.resubscribeTask({ tenant: '', id: task.id }));
      await new Promise((r) => setTimeout(r, 60));
      const started = Date.now();
      const replies = [];
      for (let i = 0; i < 3; i++) {
        const replied = await send(other, '/status', { taskId: task.id });
        replies.push(replied);
        assert.equal(replied.status?.state, TaskState.TASK_STATE_WORKING, 'the reply carries the running state');
        assert.match(textOf(replied.status?.message), /Turn running: yes/);
      }
      const commandTime = Date.now() - started;
      await Promise.race([turnDone, new Promise((_, reject) => setTimeout(() => reject(new Error('turn did not end')), 20000))]);
      assert.ok(commandTime < WORDS.length * 25, 'the commands did not wait for the turn');

      // The turn's own stream: every chunk once, in order, the replies among them, then the end state.
      assert.equal(artifactText(turnEvents), `${REPLY}`);
      const last = turnEvents.at(-1)!.payload!;
      assert.equal(last.$case, 'statusUpdate');
      assert.equal((last.value as any).status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      assert.equal(textOf((last.value as any).status.message), REPLY);
      const replyIds = replies.map((r) => r.status?.message?.messageId);
      const seenReplies = turnEvents
        .filter((e) => e.payload?.$case === 'statusUpdate' && (e.payload.value as any).metadata?.command === 'status')
        .map((e) => (e.payload!.value as any).status.message.messageId);
      assert.deepEqual(seenReplies, replyIds, 'the running stream received each reply once, in order');

      // The subscriber saw the same, and the store holds the whole reply once.
      const subscribed = await subscription;
      assert.ok(subscribed.filter((e) => e.payload?.$case === 'statusUpdate' && (e.payload.value as any).metadata?.command === 'status').length === 3);
      const stored = await client.getTask({ tenant: '', id: task.id, historyLength: undefined });
      assert.equal(stored.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      assert.equal(stored.artifacts.length, 1);
      assert.equal(stored.artifacts[0]!.parts.map((p: any) => p.content?.value ?? '').join(''), REPLY);
      assert.equal(textOf(stored.status?.message), REPLY);
      const history = stored.history.map((m) => (m.metadata?.command ? `cmd:${m.role}` : textOf(m)));
      assert.equal(history.filter((x) => x === REPLY).length, 1);
    });

    it('a second ordinary message during a turn is refused clearly, and the turn goes on', async () => {
      const client = await h.client(transport);
      const stream = client.sendMessageStream({ tenant: '', message: userMessage('Slow one'), configuration: undefined, metadata: {} });
      const first = await stream.next();
      const taskId = (first.value as any).payload.value.id;
      // The busy error leaves as A2A's UnsupportedOperation on every transport (src/server/a2a-errors.ts).
      await assert.rejects(send(client, 'Interrupting', { taskId }), (error) => error instanceof UnsupportedOperationError && /still being written/.test(error.message));
      const rest = await collect(stream);
      const final = rest.at(-1)!.payload!.value as any;
      assert.equal(final.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    });
  });
}
