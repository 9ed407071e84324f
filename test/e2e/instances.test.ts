/**
 * Several instances on one PostgreSQL database (issue: one task engine, several instances).
 * Three `tiny-harness serve --database <url>` processes share a schema of their own; requests go
 * round-robin across them, as behind a load balancer without session affinity. Each rule of the
 * single instance must hold across them: one turn per task, commands during a turn (CMD-8,
 * CMD-9), subscriptions, cancel with its cascade (CMD-31), sub-task notes, message ids handled
 * once (CMD-13), and a turn whose instance is killed ends as interrupted on another, which counts
 * the lease it took over in its metrics.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { TaskState, type StreamResponse, type Task, type TaskStatusUpdateEvent } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { needs } from '../needs.js';
import { POSTGRES } from '../support/postgres.js';
import type { RunningModelServer } from '../fixtures/model-server.js';
import { startCluster, type Cluster } from './process.js';
import { createClient, send, textOf, sendStream } from './support.js';
import { waitFor } from '../support/wait.js';
import { parseExposition, valueOf } from '../telemetry/exposition.js';

/** How long an instance's lease lasts without a heartbeat, here: short, so the loss test ends soon. */
const LEASE_MS = 1500;
const REPLY = 'one two three four five six seven eight';

let cluster: Cluster;
let model: RunningModelServer;
let clients: Client[] = [];

function promptOf(body: any): string {
  return JSON.stringify(body?.messages ?? []);
}

describe('several instances on one PostgreSQL database', needs(POSTGRES), () => {
  before(async () => {
    cluster = await startCluster({
      instanceLeaseMs: LEASE_MS,
      // One at a time would hide a race of migrations: all three start together.
      start: 'together',
      reply: REPLY,
      holdAfterChunks: 2,
    });
    ({ model, clients } = cluster);
  });

  after(async () => {
    await cluster?.close();
  });

  /** Starts a streamed turn on `client` whose reply holds until `release()`; resolves with its task id and the rest of its stream. */
  async function heldTurn(client: Client, taskId?: string, messageId?: string) {
    const { taskId: id, key, text, stream, release } = await cluster.heldTurn(client, { taskId, messageId });
    const events: StreamResponse[] = [];
    /** Emits `event` on each event that arrives. */
    const arrivals = new EventEmitter();
    // A stream cut by its instance's death ends there; the test then looks at what arrived.
    const ended = (async () => {
      for await (const event of stream) {
        events.push(event);
        arrivals.emit('event');
      }
      return events;
    })().catch(() => events);
    return { taskId: id, key, text, events, arrivals, ended, release };
  }

  /** The instance's `tiny_harness_turn_leases_taken_over_total`, scraped from its `/metrics`. */
  async function leasesTakenOver(instance: { url: string }): Promise<number> {
    const response = await fetch(`${instance.url}/metrics`, { signal: AbortSignal.timeout(10_000) });
    assert.equal(response.status, 200);
    return valueOf(parseExposition(await response.text()), 'tiny_harness_turn_leases_taken_over_total');
  }

  const statusUpdates = (events: StreamResponse[]): TaskStatusUpdateEvent[] =>
    events.flatMap((event) => (event.payload?.$case === 'statusUpdate' ? [event.payload.value] : []));

  it('one turn per task across instances: a message to a task whose turn runs on another instance is refused', async () => {
    const [a, b] = clients as [Client, Client];
    const turn = await heldTurn(a);
    await assert.rejects(
      send(b, 'Interrupting', { taskId: turn.taskId }),
      (error) => error instanceof UnsupportedOperationError && /still being written/.test(error.message),
    );
    turn.release();
    await turn.ended;
  });

  it("CMD-8, CMD-9 across instances: a command to B during a turn on A answers WORKING at once, and its reply reaches A's stream once, in order", async () => {
    const [a, b] = clients as [Client, Client];
    const turn = await heldTurn(a);
    const answer = await send(b, '/status', { taskId: turn.taskId });
    assert.equal(answer.status?.state, TaskState.TASK_STATE_WORKING);
    const replyId = answer.status?.message?.messageId;
    assert.ok(replyId);
    // The reply reaches A's stream while the turn is still held, before its end.
    await waitFor("the reply on A's stream", turn.arrivals, 'event', () =>
      statusUpdates(turn.events).some((update) => update.status?.message?.messageId === replyId),
    );
    turn.release();
    const events = await turn.ended;
    const updates = statusUpdates(events);
    assert.equal(updates.filter((update) => update.status?.message?.messageId === replyId).length, 1, 'once');
    assert.equal(updates.at(-1)?.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
  });

  it('SubscribeToTask on C follows a turn running on A: its events live, in order, each once', async () => {
    const [a, , c] = clients as [Client, Client, Client];
    const turn = await heldTurn(a);
    const subscription = c.resubscribeTask({ tenant: '', id: turn.taskId });
    const first = await subscription.next();
    assert.equal(((first.value as StreamResponse).payload?.value as Task).id, turn.taskId);
    turn.release();
    const seen: StreamResponse[] = [];
    for await (const event of subscription) seen.push(event);
    const text = seen
      .flatMap((event) =>
        event.payload?.$case === 'artifactUpdate'
          ? event.payload.value.artifact!.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : ''))
          : [],
      )
      .join('');
    const whole = (await turn.ended)
      .flatMap((event) =>
        event.payload?.$case === 'artifactUpdate'
          ? event.payload.value.artifact!.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : ''))
          : [],
      )
      .join('');
    // What C saw after it subscribed is the end of what A streamed, in order, nothing twice.
    assert.ok(whole.endsWith(text) && text.length > 0, `C saw "${text}", A streamed "${whole}"`);
    assert.equal(statusUpdates(seen).at(-1)?.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
  });

  it('CancelTask on B cancels the turn on A and aborts its model request; every stream sees one final status, CANCELED', async () => {
    const [a, b, c] = clients as [Client, Client, Client];
    const aborted = model.aborted;
    const turn = await heldTurn(a);
    const subscription = c.resubscribeTask({ tenant: '', id: turn.taskId });
    await subscription.next();
    const subscribed = (async () => {
      const seen: StreamResponse[] = [];
      for await (const event of subscription) seen.push(event);
      return seen;
    })();
    const canceled = await b.cancelTask({ tenant: '', id: turn.taskId, metadata: {} });
    assert.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED);
    await model.waitForAborted(aborted + 1);
    const finals = (events: StreamResponse[]) =>
      statusUpdates(events)
        .map((update) => update.status?.state)
        .filter((state) => state !== TaskState.TASK_STATE_WORKING && state !== TaskState.TASK_STATE_SUBMITTED);
    assert.deepEqual(finals(await turn.ended), [TaskState.TASK_STATE_CANCELED], "A's stream");
    assert.deepEqual(finals(await subscribed), [TaskState.TASK_STATE_CANCELED], "C's subscription");
    const stored = await c.getTask({ tenant: '', id: turn.taskId, historyLength: undefined });
    assert.equal(stored.status?.state, TaskState.TASK_STATE_CANCELED);
    const endings = stored.history.filter((m) => textOf(m) === 'The turn was canceled.');
    assert.equal(endings.length, 1, "the canceled turn's end is stored once");
  });

  it('CMD-32 across instances: /stop on B replies at once, then ends the turn running on A as a finished turn, its partial reply kept', async () => {
    const [a, b] = clients as [Client, Client];
    const aborted = model.aborted;
    const turn = await heldTurn(a);
    const reply = await send(b, '/stop', { taskId: turn.taskId });
    assert.match(textOf(reply.status?.message), /^Stopping the turn/);
    assert.equal(reply.status?.state, TaskState.TASK_STATE_WORKING, "the reply leaves the running turn's state");
    await model.waitForAborted(aborted + 1);
    const events = await turn.ended;
    const final = statusUpdates(events).at(-1)!;
    assert.equal(final.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.match(textOf(final.status?.message), /^one two\s*\n\n\[stopped by the user\]$/);
  });

  it('CMD-30, CMD-31 across instances: a sub-task started on B tells its parent, watched on A; cancelling the parent on C cancels a sub-task running on B', async () => {
    const [a, b, c] = clients as [Client, Client, Client];
    const parent = await send(a, 'Hello');
    // The sub-task's reply holds until the parent is watched on A, so its note comes after.
    const { key: noteKey, release: releaseNote } = cluster.hold();
    const spawned = await send(b, `/spawn HOLD-${noteKey} summarise the greeting`, { taskId: parent.id });
    const ref = spawned.status?.message?.metadata?.['task_ref'] as string;
    assert.ok(ref);
    await model.waitForRequest((request) => promptOf(request.body).includes(`HOLD-${noteKey}`));
    const watch = a.resubscribeTask({ tenant: '', id: parent.id });
    await watch.next();
    releaseNote();
    let note: TaskStatusUpdateEvent | undefined;
    for await (const event of watch) {
      if (
        event.payload?.$case === 'statusUpdate' &&
        textOf(event.payload.value.status?.message).includes(`Sub-task ${ref}`)
      )
        note = event.payload.value;
    }
    assert.match(textOf(note?.status?.message), /completed/);

    const { key } = cluster.hold();
    const held = await send(b, `/spawn HOLD-${key} work on it`, { taskId: parent.id });
    const child = held.status?.message?.metadata?.['task_ref'] as string;
    await model.waitForRequest((request) => promptOf(request.body).includes(`HOLD-${key}`));
    const aborted = model.aborted;
    await c.cancelTask({ tenant: '', id: parent.id, metadata: {} });
    await model.waitForAborted(aborted + 1);
    const after = await a.getTask({ tenant: '', id: child });
    assert.equal(after.status?.state, TaskState.TASK_STATE_CANCELED);
  });

  it('CMD-13 across instances: a command resent with the same messageId to another instance runs once', async () => {
    const [a, b] = clients as [Client, Client];
    const task = await send(a, 'Hello');
    const messageId = randomUUID();
    const first = await send(a, '/status', { taskId: task.id, messageId });
    const again = await send(b, '/status', { taskId: task.id, messageId });
    assert.equal(again.status?.message?.messageId, first.status?.message?.messageId, 'the first reply, not a new one');
    const stored = await b.getTask({ tenant: '', id: task.id });
    assert.equal(stored.history.filter((message) => message.messageId === messageId).length, 1);
  });

  it("CMD-34 across instances: a streaming resend of a turn's message to another instance follows that turn to its end; the turn runs once", async () => {
    const [a, b] = clients as [Client, Client];
    const messageId = randomUUID();
    const turn = await heldTurn(a, undefined, messageId);
    const resend = sendStream(b, turn.text, { messageId });
    const first = await resend.next();
    assert.equal(
      ((first.value as StreamResponse).payload?.value as Task).id,
      turn.taskId,
      'the task the first send made',
    );
    turn.release();
    const rest: StreamResponse[] = [];
    for await (const event of resend) rest.push(event);
    assert.equal(
      statusUpdates(rest).at(-1)?.status?.state,
      TaskState.TASK_STATE_INPUT_REQUIRED,
      'followed to the end of the turn',
    );
    await turn.ended;
    assert.equal(
      model.requests.filter((request) => promptOf(request.body).includes(`HOLD-${turn.key}`)).length,
      1,
      'one model request',
    );
  });

  it("a turn whose instance is killed (kill -9) ends as interrupted on another instance, nothing acknowledged is lost, and that survivor's /metrics counts the lease taken over", async () => {
    const doomed = await cluster.startInstance('instance-3');
    try {
      const victim = await createClient(doomed.url, 'JSONRPC');
      const [, b] = clients as [Client, Client];
      const task = await send(b, 'Remember this');
      const turn = await heldTurn(victim, task.id);
      const watch = b.resubscribeTask({ tenant: '', id: turn.taskId });
      await watch.next();
      const before = await Promise.all(cluster.instances.map(leasesTakenOver));
      await doomed.stop('SIGKILL');
      const seen: StreamResponse[] = [];
      for await (const event of watch) seen.push(event);
      const end = statusUpdates(seen).at(-1);
      assert.equal(end?.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      assert.match(textOf(end?.status?.message), /interrupted/);
      // Counted before the survivor ends the turns it took: by the interrupted end, it shows.
      const grown = (await Promise.all(cluster.instances.map(leasesTakenOver))).map((now, i) => now - before[i]!);
      assert.deepEqual(
        grown.toSorted(),
        [0, 0, 1],
        `one survivor took the dead instance's one lease over, and counted it: ${grown.join(', ')}`,
      );
      const stored = await b.getTask({ tenant: '', id: turn.taskId });
      assert.ok(
        stored.history.some((message) => textOf(message) === 'Remember this'),
        'the acknowledged first message is kept',
      );
      turn.release();
    } finally {
      await doomed.stop('SIGKILL');
    }
  });
});
