/**
 * The while-busy extension across instances on one PostgreSQL database
 * (spec/while-busy-extension-v1.md): a message queued on B while A runs the task's turn runs
 * once A's turn has ended, wherever the task is free; an interrupt from B stops A's turn, a
 * rollback from B stops and rewinds it (CMD-37); a queue whose instance died runs on the survivor.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { needs } from '../needs.js';
import { POSTGRES } from '../support/postgres.js';
import { QUEUED_KEY, rewindOf, WHILE_BUSY_KEY, type QueuedNote } from '../../src/wire.js';
import { INTERRUPTED_TEXT, STOPPED_MARK } from '../../src/runtime/turn/turn-end.js';
import { startCluster, type Cluster } from './process.js';
import { collect, createClient, textOf, userMessage } from './support.js';
import { within } from '../support/wait.js';

const LEASE_MS = 1500;
const REPLY = 'one two three four five six';

let cluster: Cluster;

function queue(client: Client, text: string, taskId: string, how: 'enqueue' | 'interrupt' | 'rollback') {
  const message = userMessage(text, { taskId, messageId: randomUUID() });
  message.metadata = { [WHILE_BUSY_KEY]: how };
  return client.sendMessageStream({ tenant: '', message, configuration: undefined, metadata: {} });
}

async function queuedNote(stream: AsyncGenerator<StreamResponse, void, undefined>): Promise<QueuedNote> {
  const first = await within('the queued Task', stream.next());
  assert.equal(first.value?.payload?.$case, 'task');
  return (first.value.payload.value as Task).metadata?.[QUEUED_KEY] as QueuedNote;
}

function lastStatus(events: StreamResponse[]) {
  const last = events.at(-1)?.payload;
  assert.equal(last?.$case, 'statusUpdate', 'the stream ends with a status');
  return last.value.status;
}

const ownTurn = (events: StreamResponse[], messageId: string) =>
  events.some((e) => e.payload?.$case === 'task' && e.payload.value.history.at(-1)?.messageId === messageId);

describe('while-busy across instances on one PostgreSQL database', needs(POSTGRES), () => {
  before(async () => {
    cluster = await startCluster({
      names: ['queue-a', 'queue-b'],
      instanceLeaseMs: LEASE_MS,
      start: 'one by one',
      reply: REPLY,
      holdAfterChunks: 2,
      // Only the message itself holds: a queued message after it runs through.
      holdKeyIn: (body) => JSON.stringify(body?.messages?.at(-1) ?? ''),
    });
  });

  after(async () => {
    await cluster?.close();
  });

  it('while-busy enqueue across instances: a message queued on B runs after the turn on A has ended', async () => {
    const [a, b] = cluster.clients as [Client, Client];
    const turn = await cluster.heldTurn(a);
    const queued = queue(b, 'queued on B', turn.taskId, 'enqueue');
    const note = await queuedNote(queued);
    assert.equal(note.position, 1);
    turn.release();
    await collect(turn.stream);
    const events = await collect(queued);
    assert.ok(ownTurn(events, note.messageId), "B's stream carries the queued message's own turn");
    assert.equal(lastStatus(events)?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(textOf(lastStatus(events)?.message), REPLY);
    const task = await b.getTask({ tenant: '', id: turn.taskId, historyLength: undefined });
    assert.deepEqual(
      task.history.filter((m) => m.role === 1).map((m) => textOf(m)),
      [turn.text, 'queued on B'],
    );
  });

  it('while-busy interrupt across instances: an interrupt sent to B stops the turn on A, then runs', async () => {
    const [a, b] = cluster.clients as [Client, Client];
    const turn = await cluster.heldTurn(a);
    const urgent = queue(b, 'urgent on B', turn.taskId, 'interrupt');
    const note = await queuedNote(urgent);
    const stopped = lastStatus(await collect(turn.stream));
    assert.ok(textOf(stopped?.message).endsWith(STOPPED_MARK), "A's turn ended as /stop ends it");
    const events = await collect(urgent);
    assert.ok(ownTurn(events, note.messageId));
    assert.equal(textOf(lastStatus(events)?.message), REPLY);
    turn.release();
  });

  it('CMD-37 while-busy rollback across instances: a rollback sent to B stops the turn on A and hides it before its own turn runs', async () => {
    const [a, b] = cluster.clients as [Client, Client];
    const turn = await cluster.heldTurn(a);
    const instead = queue(b, 'instead on B', turn.taskId, 'rollback');
    const note = await queuedNote(instead);
    const stopped = lastStatus(await collect(turn.stream));
    assert.ok(textOf(stopped?.message).endsWith(STOPPED_MARK), "A's turn ended as /stop ends it");
    const events = await collect(instead);
    assert.ok(ownTurn(events, note.messageId));
    assert.equal(textOf(lastStatus(events)?.message), REPLY);
    turn.release();
    const task = await a.getTask({ tenant: '', id: turn.taskId, historyLength: undefined });
    const mark = task.history.find((m) => rewindOf(m));
    assert.equal(rewindOf(mark!)?.hidden.length, 2, "A's message and its partial reply");
    assert.deepEqual(
      task.history.map((m) => textOf(m)),
      [textOf(mark), 'instead on B', REPLY],
      'A read the task as B left it',
    );
  });

  it('drain: a message queued behind a turn on an instance that drains runs on another once that turn has finished with its whole reply', async () => {
    const draining = await cluster.startInstance('queue-c');
    const [c, b] = [await createClient(draining.url, 'JSONRPC'), cluster.clients[1]!];
    const turn = await cluster.heldTurn(c);
    const queued = queue(b, 'queued during the drain', turn.taskId, 'enqueue');
    const note = await queuedNote(queued);
    const exited = draining.stop('SIGTERM');
    await draining.logged('the drain beginning', /draining/);
    turn.release();
    const own = await collect(turn.stream);
    assert.equal(lastStatus(own)?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(textOf(lastStatus(own)?.message), REPLY, "C's turn finished on its own");
    assert.equal(await exited, 0, 'C stopped cleanly');
    // C runs no queue while it drains: the message's turn ran on another instance.
    const events = await collect(queued);
    assert.ok(ownTurn(events, note.messageId), "B's stream carries the queued message's own turn");
    assert.equal(textOf(lastStatus(events)?.message), REPLY);
  });

  it('while-busy: the queue of a task whose instance died runs on the survivor once the turn is recovered', async () => {
    const [a, b] = cluster.clients as [Client, Client];
    const turn = await cluster.heldTurn(a);
    const queued = queue(b, 'after the crash', turn.taskId, 'enqueue');
    const note = await queuedNote(queued);
    cluster.instances[0]!.child.kill('SIGKILL');
    const events = await collect(queued);
    assert.ok(ownTurn(events, note.messageId), 'the queued message ran on B');
    assert.equal(textOf(lastStatus(events)?.message), REPLY);
    const task = await b.getTask({ tenant: '', id: turn.taskId, historyLength: undefined });
    const said = task.history.map((m) => textOf(m));
    assert.ok(said.includes(INTERRUPTED_TEXT), "A's turn ended as interrupted first");
    assert.equal(said.at(-2), 'after the crash');
    turn.release();
  });
});
