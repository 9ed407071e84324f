/**
 * Issue 24: a stream resumes from where it broke off on any instance sharing the database, and
 * after the instance that ran the turn died (`kill -9`): the log is the task's, not an instance's.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { needs } from '../needs.js';
import { POSTGRES } from '../support/postgres.js';
import { RESUMED_AFTER_KEY } from '../../src/wire.js';
import { startCluster, type Cluster } from './process.js';
import { assertDenseFromOne, collect, createClient, generationIn, textOf } from './support.js';

const LEASE_MS = 1500;
const REPLY = 'one two three four five six seven eight';

/** Resumes the task's stream with `Last-Event-ID: after` on `client`: the Task it starts with, and the events after it. */
async function resume(client: Client, taskId: string, after: number) {
  const [task, ...events] = await collect(
    client.resubscribeTask({ tenant: '', id: taskId }, { serviceParameters: { 'Last-Event-ID': String(after) } }),
  );
  assert.equal(task?.payload?.$case, 'task');
  return { task: task!, events };
}

describe('stream resume across instances on PostgreSQL (issue 24)', needs(POSTGRES), () => {
  let cluster: Cluster;

  before(async () => {
    cluster = await startCluster({ instanceLeaseMs: LEASE_MS, start: 'one by one', reply: REPLY, holdAfterChunks: 2 });
  });
  after(async () => {
    await cluster?.close();
  });

  it('issue 24: a stream of a turn on A, cut, resumes on B from the last event seen: the halves join up, in order, none missing, none twice', async () => {
    const [a, b] = cluster.clients as [Client, Client];
    const turn = await cluster.heldTurn(a);
    const seen = [turn.first];
    seen.push((await turn.stream.next()).value as StreamResponse); // WORKING
    await turn.stream.return(undefined); // the client's connection to A breaks off
    const last = generationIn(seen.at(-1)!);
    const resumed = resume(b, turn.taskId, last);
    turn.release();
    const { task, events } = await resumed;
    assert.equal((task.payload!.value as { metadata: Record<string, unknown> }).metadata[RESUMED_AFTER_KEY], last);
    const joined = [...seen, ...events];
    assertDenseFromOne(joined);
    const final = joined.at(-1)!.payload;
    assert.equal(final?.$case === 'statusUpdate' && final.value.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const text = joined
      .map((event) => (event.payload?.$case === 'artifactUpdate' ? event.payload.value.artifact : undefined))
      .flatMap((artifact) => artifact?.parts ?? [])
      .map((part) => (part.content?.$case === 'text' ? part.content.value : ''))
      .join('');
    assert.equal(text, REPLY, 'the reply once, whole');
  });

  it('issue 24: after a kill -9 of the instance that ran the turn, the stream resumes on another: the turn ends interrupted, nothing missing, none twice', async () => {
    const doomed = await cluster.startInstance('instance-doomed');
    try {
      const victim = await createClient(doomed.url, 'JSONRPC');
      const b = cluster.clients[1]!;
      const turn = await cluster.heldTurn(victim);
      const seen = [turn.first, (await turn.stream.next()).value as StreamResponse];
      await doomed.stop('SIGKILL');
      const last = generationIn(seen.at(-1)!);
      // The turn is ended as interrupted by a survivor once the dead instance's lease is past;
      // a resume meanwhile follows the task live until then.
      const { events } = await resume(b, turn.taskId, last);
      const joined = [...seen, ...events];
      assertDenseFromOne(joined);
      const end = joined.at(-1)!.payload;
      assert.ok(end?.$case === 'statusUpdate');
      assert.equal(end.value.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      assert.match(textOf(end.value.status?.message), /interrupted/);
      turn.release();
    } finally {
      await doomed.stop('SIGKILL');
    }
  });
});
