/**
 * Issue 23, "Leases that hold under stalls": a turn is fenced by its lease. Two
 * `tiny-harness serve --database <url>` processes share a schema of their own, with a short
 * lease. The instance running a turn is paused (SIGSTOP) past its lease; the other ends that
 * turn as interrupted and runs the next one; the paused instance is then let go on (SIGCONT),
 * its model stream with it. Every write it tries for the old turn is refused: the task holds
 * nothing it wrote after the takeover, and it says so in its log. A paused instance stopped in
 * the middle of a transaction, holding the task's row lock, does not hold the takeover back
 * for ever either: PostgreSQL ends that transaction (`idle_in_transaction_session_timeout`).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { needs } from '../needs.js';
import { POSTGRES, type TempSchema } from '../support/postgres.js';
import { lastMessage, type RunningModelServer } from '../fixtures/model-server.js';
import { sessionSettings } from '../../src/store/postgres-database.js';
import { startCluster, type Cluster, type ServerProcess } from './process.js';
import { send, textOf, sendStream } from './support.js';
import { poll, waitFor, within } from '../support/wait.js';

/** Short, so that the takeover comes soon; the idle-in-transaction bound follows it. */
const LEASE_MS = 1500;
/** The held turn's reply: it pauses after its first two words until the test lets it go. */
const FIRST_REPLY =
  'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango';
const SECOND_REPLY = 'the second turn answers here';
const THIRD_REPLY = 'the third turn answers here';
const WRITTEN_BEFORE_PAUSE = ['alpha', 'bravo'];
const FENCED_LOG = /a turn was fenced/g;

describe('a turn fenced by its lease, across instances on PostgreSQL (issue 23)', needs(POSTGRES), () => {
  let cluster: Cluster;
  let schema: TempSchema;
  let model: RunningModelServer;
  let a: ServerProcess;
  let clientA: Client;
  let clientB: Client;

  before(async () => {
    cluster = await startCluster({
      names: ['a', 'b'],
      instanceLeaseMs: LEASE_MS,
      start: 'together',
      reply: (body) => {
        const last = lastMessage(body).content;
        return last.includes('second') ? SECOND_REPLY : last.includes('third') ? THIRD_REPLY : FIRST_REPLY;
      },
      holdAfterChunks: WRITTEN_BEFORE_PAUSE.length,
      // The turns after the takeover carry the held message in their history: they must not hold.
      holdKeyIn: (body) => lastMessage(body).content,
    });
    ({ schema, model } = cluster);
    [a] = cluster.instances as [ServerProcess];
    [clientA, clientB] = cluster.clients as [Client, Client];
  });

  after(async () => {
    await cluster?.close();
  });

  /**
   * Starts a streamed turn on A whose reply holds after its first words, and resolves once A has
   * stored them (the stream sends an event once it is stored); the rest of the stream, with how
   * it ended, is read in the background.
   */
  async function heldTurnOnA() {
    const { key, release } = cluster.hold();
    const stream = sendStream(clientA, `HOLD-${key} first message`);
    let taskId = '';
    let written = '';
    await within(
      'the held words stored on A',
      (async () => {
        while (!WRITTEN_BEFORE_PAUSE.every((word) => written.includes(word))) {
          const { value, done } = await stream.next();
          if (done) throw new Error('the stream ended before the held words');
          const payload = (value as StreamResponse).payload;
          if (payload?.$case === 'task') taskId = payload.value.id;
          if (payload?.$case === 'artifactUpdate') written += artifactText(payload.value.artifact?.parts);
        }
      })(),
    );
    const end = (async () => {
      try {
        for await (const _event of stream);
        return undefined;
      } catch (error) {
        return error;
      }
    })();
    return { taskId, end, release };
  }

  async function interruptedOnB(taskId: string): Promise<Task> {
    return poll('the turn ended as interrupted on B', async () => {
      const task = await clientB.getTask({ tenant: '', id: taskId });
      return task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED &&
        /interrupted/.test(textOf(task.status.message))
        ? task
        : undefined;
    });
  }

  function fencedLogs(): number {
    return a.stderr().match(FENCED_LOG)?.length ?? 0;
  }

  it('SIGSTOP the instance running a turn, take the turn over on another, SIGCONT: the old turn writes nothing more, stops its model request, and logs that it was fenced', async () => {
    const turn = await heldTurnOnA();
    const requestsBefore = model.requests.length;
    a.child.kill('SIGSTOP');

    await interruptedOnB(turn.taskId);
    const second = await send(clientB, 'the second message', { taskId: turn.taskId });
    assert.equal(second.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(textOf(second.status?.message), SECOND_REPLY);

    a.child.kill('SIGCONT');
    turn.release(); // A's model stream goes on: every word after the pause reaches A
    await waitFor('A logs that its turn was fenced', a.child.stderr!, 'data', () => fencedLogs() >= 1);
    // A's stream reads the task's log: it ends with the turn's end as B stored it (interrupted),
    // or, when A's turn stopped before A read that, saying the turn was taken over.
    const streamEnd = await within("the end of A's stream", turn.end);
    if (streamEnd !== undefined) assert.match(String((streamEnd as Error)?.message), /taken over by another instance/);

    const task = await clientB.getTask({ tenant: '', id: turn.taskId });
    const history = task.history.map((message) => textOf(message));
    const first = history.findIndex((text) => text.includes('first message'));
    const interrupted = history.findIndex((text) => /interrupted/.test(text));
    const secondMessage = history.indexOf('the second message');
    const secondReply = history.indexOf(SECOND_REPLY);
    assert.ok(
      first >= 0 && first < interrupted && interrupted < secondMessage && secondMessage < secondReply,
      `the history in order: ${JSON.stringify(history)}`,
    );
    assert.equal(secondReply, history.length - 1, 'the new turn has the last word');
    const words = task.artifacts.flatMap((artifact) => artifactText(artifact.parts).split(/\s+/).filter(Boolean));
    for (const word of FIRST_REPLY.split(' ')) {
      const count = words.filter((w) => w === word).length;
      if (WRITTEN_BEFORE_PAUSE.includes(word)) assert.equal(count, 1, `"${word}", written before the pause, once`);
      else assert.equal(count, 0, `"${word}" came after the takeover: not stored`);
    }
    assert.equal(
      task.artifacts.filter((artifact) => artifactText(artifact.parts) === SECOND_REPLY).length,
      1,
      "the new turn's reply, once",
    );
    assert.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(textOf(task.status?.message), SECOND_REPLY, 'no final status of the fenced turn');
    assert.equal(model.requests.length, requestsBefore + 1, 'the fenced turn asked the model nothing more');

    // A serves the task again, as any instance does: nothing of the fenced turn is left behind.
    const third = await send(clientA, 'the third message', { taskId: turn.taskId });
    assert.equal(textOf(third.status?.message), THIRD_REPLY);
    const after = (await clientB.getTask({ tenant: '', id: turn.taskId })).history.map((message) => textOf(message));
    assert.deepEqual(after.slice(0, history.length), history);
    assert.deepEqual(after.slice(history.length), ['the third message', THIRD_REPLY]);
    assert.equal(fencedLogs(), 1, 'one warning per fenced turn');
  });

  it("a paused instance's transaction holding the task's row lock does not hold the takeover back: PostgreSQL ends it after the idle bound", async () => {
    const turn = await heldTurnOnA();
    // Stands for A stopped between two statements of a write: the harness's session settings, a row lock, then nothing.
    const holder = new pg.Client({ connectionString: schema.url, ...sessionSettings(LEASE_MS) });
    const holderErrors: Error[] = [];
    holder.on('error', (error) => holderErrors.push(error));
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select id from tasks where id = $1 for update', [turn.taskId]);
      a.child.kill('SIGSTOP');

      await interruptedOnB(turn.taskId);
      await waitFor('the idle transaction ended by the server', holder, 'error', () => holderErrors.length > 0);
      assert.equal((holderErrors[0] as { code?: string }).code, '25P03', String(holderErrors[0]));
      const second = await send(clientB, 'the second message', { taskId: turn.taskId });
      assert.equal(textOf(second.status?.message), SECOND_REPLY);

      a.child.kill('SIGCONT');
      turn.release();
      await waitFor('A logs that its turn was fenced', a.child.stderr!, 'data', () => fencedLogs() >= 2);
      await within("the end of A's stream", turn.end);
      const task = await clientB.getTask({ tenant: '', id: turn.taskId });
      assert.equal(textOf(task.status?.message), SECOND_REPLY);
      assert.ok(!task.artifacts.some((artifact) => artifactText(artifact.parts).includes('charlie')));
    } finally {
      await holder.end().catch(() => undefined);
    }
  });
});

function artifactText(parts: readonly { content?: { $case: string; value?: unknown } }[] | undefined): string {
  return (parts ?? []).map((part) => (part.content?.$case === 'text' ? String(part.content.value) : '')).join('');
}
