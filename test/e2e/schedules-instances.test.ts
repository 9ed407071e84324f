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
import { lockTable, POSTGRES, withDb } from '../support/postgres.js';
import { poll } from '../support/wait.js';
import { parseExposition, valueOf } from '../telemetry/exposition.js';
import { startCluster, type Cluster, type ServerProcess } from './process.js';
import { deduped, startReceiver } from './push-receiver.js';
import { createClient, dataOf, send, textOf, tasksInContext, userMessage } from './support.js';

let cluster: Cluster | undefined;

after(async () => {
  await cluster?.close();
});

/** An `at` time `ms` from now, to the second, in UTC. */
function atSoon(ms: number): string {
  return `${new Date(Math.ceil((Date.now() + ms) / 1000) * 1000).toISOString().slice(0, 19)}Z`;
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

/** The instance's count of scheduled runs that ended (any outcome but `skipped` and `not_started`), from its `/metrics`. */
async function runsEnded(instance: ServerProcess): Promise<number> {
  const response = await fetch(`${instance.url}/metrics`, { signal: AbortSignal.timeout(10_000) });
  assert.equal(response.status, 200);
  const families = parseExposition(await response.text());
  return ['completed', 'failed', 'input_required', 'canceled', 'rejected']
    .map((outcome) => valueOf(families, 'tiny_harness_schedule_runs_total', { outcome }))
    .reduce((a, b) => a + b, 0);
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
        carrying(await tasksInContext(a, first.contextId), prompt).find(
          (task) => task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED,
        ),
      );
    const tasks = await tasksInContext(a, first.contextId);
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
      carrying(await tasksInContext(bClient, first.contextId), prompt).find(
        (task) => task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED,
      ),
    );
    assert.equal(carrying(await tasksInContext(bClient, first.contextId), prompt).length, 1);
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

  it('issue 39: three instances, one killed (kill -9) just after its claim committed, before its run made a task: another takes the claim over and runs it, once', async () => {
    cluster = await startCluster({
      instanceLeaseMs: 1000,
      start: 'together',
      reply: 'done',
      holdAfterChunks: 1,
      config: { schedules: { pollMs: 100 } },
    });
    const [a] = cluster.clients as [Client, Client, Client];
    const url = cluster.schema.url;
    const first = await send(a, 'hello');
    const prompt = 'claimed then killed';
    const made = await send(a, `/schedule every 1d ${prompt}`, { taskId: first.id });
    const id = dataOf(made.status?.message).schedule.id as string;
    // The first thing a run does after its claim has committed is read the push configs to set
    // on its task (runtime/schedules/schedule-runs.ts): with that table locked, the instance
    // that claims stops right there, its claim committed, nothing of its run written yet.
    const lock = await lockTable(url, 'push_configs', 'ACCESS EXCLUSIVE');
    try {
      // Due now (it would be in a day): the instances' next look claims it.
      await withDb(url, (db) => db.query('UPDATE schedules SET next_due_ms = $2 WHERE id = $1', [id, Date.now()]));
      const claim = await poll('the run claimed', () =>
        withDb(url, async (db) => {
          const { rows } = await db.query(
            `SELECT instance_id, task_id, state FROM schedule_runs WHERE schedule_id = $1`,
            [id],
          );
          return rows[0] as { instance_id: string; task_id: string; state: string } | undefined;
        }),
      );
      assert.equal(claim.state, 'claimed');
      // Its claimer is held by the lock, right after the claim: no turn lease, no task for the run yet.
      await poll('the claiming instance, waiting on the lock', () =>
        withDb(url, async (db) => {
          const { rows } = await db.query(
            `SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`,
            [`tiny-harness ${claim.instance_id}`],
          );
          return rows.length > 0;
        }),
      );
      const before = await withDb(url, async (db) => ({
        tasks: (await db.query('SELECT 1 FROM tasks WHERE id = $1', [claim.task_id])).rows.length,
        leases: (await db.query('SELECT 1 FROM turn_leases WHERE task_id = $1', [claim.task_id])).rows.length,
      }));
      assert.deepEqual(before, { tasks: 0, leases: 0 });
      const claimers = cluster.instances.filter((instance) =>
        instance.stderr().includes(`"instance":"${claim.instance_id}"`),
      );
      assert.equal(claimers.length, 1, 'the claiming instance, by its log');
      const dead = claimers[0]!;
      await dead.stop('SIGKILL');
      await lock.release();
      const survivors = cluster.instances.filter((instance) => instance !== dead);
      const survivor = await createClient(survivors[0]!.url, 'JSONRPC');
      // Once the dead instance's lease has passed, a survivor takes its claim over and starts
      // the run under the task id the claim chose.
      const run = await poll('the run, started by a survivor and ended', async () => {
        const task = carrying(await tasksInContext(survivor, first.contextId), prompt)[0];
        return task?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED && task;
      });
      assert.equal(run.id, claim.task_id);
      assert.equal(carrying(await tasksInContext(survivor, first.contextId), prompt).length, 1);
      assert.equal(
        cluster.model.requests.filter((r) => JSON.stringify(r.body?.messages ?? []).includes(prompt)).length,
        1,
        'the model was asked once',
      );
      const rows = await withDb(url, async (db) => (await db.query('SELECT * FROM schedule_runs')).rows);
      assert.equal(rows.length, 1);
      assert.equal(rows[0].state, 'started');
      assert.notEqual(rows[0].instance_id, claim.instance_id);
      const tookOver = survivors.filter((instance) =>
        /claimed by an instance that stopped is started here/.test(instance.stderr()),
      );
      assert.equal(tookOver.length, 1, 'one survivor took the claim over');
      assert.ok(tookOver[0]!.stderr().includes(`"from":"${claim.instance_id}"`));
      assert.ok(!survivors.some((instance) => instance.stderr().includes('"msg":"scheduled run claimed"')));
      // The survivors' metrics: one run ended, counted once (once the run's outcome is counted).
      await poll('the run counted', async () => (await Promise.all(survivors.map(runsEnded))).some((n) => n > 0));
      assert.deepEqual((await Promise.all(survivors.map(runsEnded))).sort(), [0, 1]);
    } finally {
      await lock.release();
      await cluster?.close();
      cluster = undefined;
    }
  });

  it('issue 39: on PostgreSQL, a push config sent with /schedule is kept in the store with it: the run, on whichever instance claims it, is pushed to it', async () => {
    const receiver = await startReceiver();
    cluster = await startCluster({
      start: 'together',
      reply: 'done',
      holdAfterChunks: 1,
      config: { schedules: { pollMs: 100 }, push: { allowPrivateNetworks: true } },
    });
    try {
      const [a] = cluster.clients as [Client, Client, Client];
      const first = await send(a, 'hello');
      const made = (await a.sendMessage({
        tenant: '',
        message: userMessage('/schedule every 1d pushed from the store', { taskId: first.id }),
        configuration: {
          acceptedOutputModes: [],
          taskPushNotificationConfig: {
            tenant: '',
            id: 'given',
            taskId: '',
            url: receiver.url,
            token: 'pg-token',
            authentication: undefined,
          },
          returnImmediately: false,
        },
        metadata: {},
      })) as Task;
      const id = dataOf(made.status?.message).schedule.id as string;
      // Off the task /schedule was sent to: what pushes the run is the schedule's own copy.
      await a.deleteTaskPushNotificationConfig({ tenant: '', taskId: first.id, id: 'given' });
      await withDb(cluster.schema.url, (db) =>
        db.query('UPDATE schedules SET next_due_ms = $2 WHERE id = $1', [id, Date.now()]),
      );
      const ofRun = () =>
        deduped(receiver.received).filter(
          (x) => (x.body.task?.id ?? x.body.statusUpdate?.taskId ?? x.body.artifactUpdate?.taskId) !== first.id,
        );
      await poll("the run's end pushed", () =>
        ofRun().some(
          (x) => x.kind === 'statusUpdate' && /INPUT_REQUIRED/.test(String(x.body.statusUpdate.status?.state)),
        ),
      );
      const events = ofRun();
      assert.equal(events[0]!.kind, 'task');
      assert.match(JSON.stringify(events[0]!.body.task.history), /pushed from the store/);
      assert.ok(events.every((x) => x.headers['x-a2a-notification-token'] === 'pg-token'));
      assert.ok(!cluster.instances.some((instance) => instance.stderr().includes('pg-token')), 'no token logged');
    } finally {
      await cluster.close();
      cluster = undefined;
      await receiver.close();
    }
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
      carrying(await tasksInContext(a, first.contextId), 'left behind').find(
        (task) => task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED,
      ),
    );
    assert.equal(carrying(await tasksInContext(a, first.contextId), 'left behind').length, 1);
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
