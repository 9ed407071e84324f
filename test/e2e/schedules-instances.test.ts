/**
 * Issue 39, schedules on several instances sharing PostgreSQL: each due run is started by exactly
 * one instance, and a run claimed by an instance killed (`kill -9`) before its turn started is
 * started by another, once. The instances are real `serve` processes; the times are `at`
 * schedules a couple of seconds ahead (the processes' own clocks), waited for by their effects.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { TaskState, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { needs } from '../needs.js';
import { POSTGRES } from '../support/postgres.js';
import { poll } from '../support/wait.js';
import { startCluster, type Cluster, type ServerProcess } from './process.js';
import { createClient, dataOf, send, textOf } from './support.js';

let cluster: Cluster | undefined;

after(async () => {
  await cluster?.close();
});

/** An `at` time `ms` from now, to the second, in UTC. */
function atSoon(ms: number): string {
  return `${new Date(Math.ceil((Date.now() + ms) / 1000) * 1000).toISOString().slice(0, 19)}Z`;
}

async function tasksIn(client: Client, contextId: string): Promise<Task[]> {
  const page = await client.listTasks({
    tenant: '',
    contextId,
    status: TaskState.TASK_STATE_UNSPECIFIED,
    pageSize: 100,
    pageToken: '',
    historyLength: 10,
    statusTimestampAfter: undefined,
    includeArtifacts: false,
  });
  return page.tasks;
}

const carrying = (tasks: Task[], prompt: string) =>
  tasks.filter((task) => task.history?.some((message) => textOf(message) === prompt));

async function runRows(url: string): Promise<Array<{ schedule_id: string; state: string; instance_id: string }>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query('SELECT schedule_id, state, instance_id FROM schedule_runs ORDER BY schedule_id')).rows;
  } finally {
    await client.end();
  }
}

describe('issue 39: schedules on several instances', needs(POSTGRES), () => {
  it('issue 39: three instances, three schedules due at once: each run starts exactly once', async () => {
    cluster = await startCluster({
      start: 'together',
      reply: 'done',
      holdAfterChunks: 1,
      config: { schedules: { pollMs: 100 } },
    });
    const [a, b] = cluster.clients as [Client, Client, Client];
    const first = await send(a, 'hello');
    const prompts = ['run one', 'run two', 'run three'];
    const at = atSoon(2000);
    for (const prompt of prompts) {
      const made = await send(b, `/schedule at ${at} ${prompt}`, { taskId: first.id });
      assert.ok(dataOf(made.status?.message)?.schedule?.id, textOf(made.status?.message));
    }
    for (const prompt of prompts)
      await poll(`the run of "${prompt}" ended`, async () =>
        carrying(await tasksIn(a, first.contextId), prompt).find(
          (task) => task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED,
        ),
      );
    const tasks = await tasksIn(a, first.contextId);
    for (const prompt of prompts) assert.equal(carrying(tasks, prompt).length, 1, prompt);
    const asked = cluster.model.requests.filter((r) => JSON.stringify(r.body?.messages ?? []).includes('run '));
    assert.equal(asked.length, 3);
    const rows = await runRows(cluster.schema.url);
    assert.deepEqual(
      rows.map((row) => row.state),
      ['started', 'started', 'started'],
    );
    await cluster.close();
    cluster = undefined;
  });

  it('issue 39: an instance killed (kill -9) once it has claimed a run and started it: the run happens once', async () => {
    cluster = await startCluster({
      names: ['a'],
      instanceLeaseMs: 1000,
      start: 'one by one',
      reply: 'done',
      holdAfterChunks: 1,
      config: { schedules: { pollMs: 100 } },
    });
    const [a] = cluster.instances;
    const client = cluster.clients[0]!;
    const first = await send(client, 'hello');
    // The run's model reply is held: a is killed while its turn runs.
    const { key } = cluster.hold();
    const prompt = `HOLD-${key} the scheduled prompt`;
    await send(client, `/schedule at ${atSoon(1500)} ${prompt}`, { taskId: first.id });
    await a!.logged('the run claimed', /scheduled run claimed/);
    await cluster.model.waitForRequest((request) => JSON.stringify(request.body?.messages ?? []).includes(prompt));
    const b = await cluster.startInstance('b');
    await cluster.startInstance('c');
    await a!.stop('SIGKILL');
    const bClient = await createClient(b.url, 'JSONRPC');
    // b or c takes a for dead; the run's task, begun on a, ends as interrupted (never run again).
    const run = await poll('the run, ended by recovery', async () =>
      carrying(await tasksIn(bClient, first.contextId), prompt).find(
        (task) => task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED,
      ),
    );
    assert.equal(carrying(await tasksIn(bClient, first.contextId), prompt).length, 1);
    const rows = await runRows(cluster.schema.url);
    assert.equal(rows.length, 1);
    assert.ok(run.id);
    assert.equal(
      cluster.model.requests.filter((r) => JSON.stringify(r.body?.messages ?? []).includes(prompt)).length,
      1,
    );
    await cluster.close();
    cluster = undefined;
  });

  it('issue 39: a claim left by an instance that died before its turn started: one of three instances starts it, once', async () => {
    cluster = await startCluster({
      start: 'together',
      reply: 'done',
      holdAfterChunks: 1,
      config: { schedules: { pollMs: 100 } },
    });
    const [a] = cluster.clients as [Client, Client, Client];
    const first = await send(a, 'hello');
    const made = await send(a, '/schedule every 1d left behind', { taskId: first.id });
    const id = dataOf(made.status?.message).schedule.id;
    // What an instance killed between its claim and its turn leaves: a claim, its task id chosen, no task.
    const db = new pg.Client({ connectionString: cluster.schema.url });
    await db.connect();
    try {
      await db.query(
        `INSERT INTO schedule_runs (schedule_id, due_ms, state, instance_id, task_id, claimed_ms, missed)
         VALUES ($1, $2, 'claimed', 'an-instance-gone', $3, $2, 1)`,
        [id, Date.now() - 1000, randomUUID()],
      );
    } finally {
      await db.end();
    }
    await poll('the run left behind, started and ended', async () =>
      carrying(await tasksIn(a, first.contextId), 'left behind').find(
        (task) => task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED,
      ),
    );
    assert.equal(carrying(await tasksIn(a, first.contextId), 'left behind').length, 1);
    assert.equal(
      cluster.model.requests.filter((r) => JSON.stringify(r.body?.messages ?? []).includes('left behind')).length,
      1,
    );
    const rows = await runRows(cluster.schema.url);
    assert.deepEqual(
      rows.map((row) => row.state),
      ['started'],
    );
    const told = cluster.instances.filter((i) =>
      /claimed by an instance that stopped is started here/.test(i.stderr()),
    );
    assert.equal(told.length, 1);
  });
  it("issue 39: a hook made on instance a is run by a POST to instance b (the store has its secret's hash), which never logs the secret", async () => {
    await cluster?.close();
    cluster = await startCluster({
      names: ['a', 'b'],
      start: 'one by one',
      reply: 'done',
      holdAfterChunks: 1,
      config: { schedules: { pollMs: 100 } },
    });
    const [a, b] = cluster.instances as [ServerProcess, ServerProcess];
    const [aClient, bClient] = cluster.clients as [Client, Client];
    const first = await send(aClient, 'hello');
    const made = await send(aClient, '/schedule hook triage this', { taskId: first.id });
    const url = new URL(dataOf(made.status?.message).schedule.url);
    assert.equal(url.origin, new URL(a.url).origin);
    const secret = url.pathname.split('/').at(-1)!;
    const onB = `${b.url}${url.pathname}`;
    assert.equal(
      (await fetch(onB.replace(secret, secret.split('').reverse().join('')), { method: 'POST' })).status,
      404,
    );
    const answer = await fetch(onB, {
      method: 'POST',
      body: '{"alert":"disk full"}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(answer.status, 202);
    const { taskId } = (await answer.json()) as { taskId: string };
    const run = await poll('the run started by b, ended', async () => {
      const task = await bClient.getTask({ tenant: '', id: taskId, historyLength: 10 });
      return task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED ? task : undefined;
    });
    assert.equal(run.contextId, first.contextId);
    assert.deepEqual(dataOf(run.history?.[0]), { alert: 'disk full' });
    // A hook's claim left by an instance that died before its turn started: taken over and run with the body it kept.
    const orphan = randomUUID();
    const db = new pg.Client({ connectionString: cluster.schema.url });
    await db.connect();
    try {
      await db.query(
        `INSERT INTO schedule_runs (schedule_id, due_ms, state, instance_id, task_id, claimed_ms, missed, input)
         VALUES ($1, $2, 'claimed', 'an-instance-gone', $3, $2, 1, $4)`,
        [url.pathname.split('/')[2], Date.now() - 1000, orphan, JSON.stringify({ text: 'the body kept' })],
      );
    } finally {
      await db.end();
    }
    const taken = await poll('the orphaned hook run, started and ended', async () => {
      const task = await bClient.getTask({ tenant: '', id: orphan, historyLength: 10 }).catch(() => undefined);
      return task?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED ? task : undefined;
    });
    assert.deepEqual(
      taken.history?.[0]?.parts.map((part) => part.content?.value),
      ['triage this', 'the body kept'],
    );
    for (const instance of cluster.instances) assert.ok(!instance.stderr().includes(secret));
    assert.deepEqual(
      (await runRows(cluster.schema.url)).map((row) => row.state),
      ['started', 'started'],
    );
    assert.match(b.stderr(), new RegExp(`/hooks/${url.pathname.split('/')[2]}/…`));
    await cluster.close();
    cluster = undefined;
  });
});
