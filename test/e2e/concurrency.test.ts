import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import { UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { nextMatching, within } from '../support/wait.js';
import { collect, send, startTestHarness, textOf, TRANSPORTS, type TestHarness, sendStream } from './support.js';

const WORDS = Array.from({ length: 40 }, (_, i) => `word${i}`);
const REPLY = WORDS.join(' ');
/** Chunks a turn streams before the fixture holds the rest of its reply. */
const HELD_AFTER = 5;

let h: TestHarness;
let held: Promise<void> = Promise.resolve();

/**
 * Holds the next turns' replies after HELD_AFTER chunks until the returned function is called:
 * whatever the test does meanwhile happens while the turn surely runs, however slow the machine.
 */
function holdReplies(): () => void {
  let letGo!: () => void;
  held = new Promise<void>((resolve) => (letGo = resolve));
  return letGo;
}

before(async () => {
  h = await startTestHarness({
    script: { reply: REPLY, chunkDelayMs: 5, hold: () => ({ afterChunks: HELD_AFTER, until: held }) },
  });
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
      const letGo = holdReplies();
      const turnStream = sendStream(client, 'Tell me forty words', { taskId: task.id });
      const turnEvents: StreamResponse[] = [];
      const ended = () =>
        turnEvents.some(
          (e) =>
            e.payload?.$case === 'statusUpdate' &&
            e.payload.value.status?.message &&
            !e.payload.value.metadata?.['command'],
        );
      // Once the turn streams, subscribe; the subscription's first event (the task) comes once it
      // listens to the task's events. Then send commands while the fixture holds the reply.
      await nextMatching('the turn starting to stream', turnStream, (event) => {
        turnEvents.push(event);
        return event.payload?.$case === 'artifactUpdate';
      });
      const turnDone = (async () => {
        for await (const event of turnStream) turnEvents.push(event);
      })();
      const subscription = other.resubscribeTask({ tenant: '', id: task.id });
      const first = await within('the subscription attaching', subscription.next());
      assert.equal(first.value?.payload?.$case, 'task', 'a subscription starts with the task');
      const subscribed = collect(subscription);
      const replies = [];
      for (let i = 0; i < 3; i++) {
        const replied = await within('a command during a held turn', send(other, '/status', { taskId: task.id }));
        replies.push(replied);
        assert.equal(replied.status?.state, TaskState.TASK_STATE_WORKING, 'the reply carries the running state');
        assert.match(textOf(replied.status?.message), /Turn running: yes/);
      }
      // The turn could not end before the fixture let its reply go: the commands did not wait for it.
      assert.equal(ended(), false, 'the turn was still running when the commands were answered');
      letGo();
      await within('the turn ending once its reply is let go', turnDone);

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
      const subscribedReplies = (await subscribed)
        .filter((e) => e.payload?.$case === 'statusUpdate' && (e.payload.value as any).metadata?.command === 'status')
        .map((e) => (e.payload!.value as any).status.message.messageId);
      assert.deepEqual(subscribedReplies, replyIds, 'the subscriber received each reply once, in order');
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
      const letGo = holdReplies();
      const stream = sendStream(client, 'Slow one');
      const first = await stream.next();
      const taskId = (first.value as any).payload.value.id;
      // The busy error leaves as A2A's UnsupportedOperation on every transport (src/server/a2a-errors.ts).
      await assert.rejects(
        send(client, 'Interrupting', { taskId }),
        (error) => error instanceof UnsupportedOperationError && /still being written/.test(error.message),
      );
      letGo();
      const rest = await collect(stream);
      const final = rest.at(-1)!.payload!.value as any;
      assert.equal(final.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    });
  });
}
