import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import { sql } from 'kysely';
import { openStore, type Store } from '../../src/store/index.js';
import { applyEvent, readLogAfter } from '../../src/store/task-log.js';
import { copyTask } from '../../src/store/stored-task.js';
import {
  artifact,
  artifactUpdate,
  callContext,
  linkSubtask,
  message,
  newTask,
  POSTGRESQL,
  reply,
  statusUpdate,
  taskEvent,
  tempStore,
  textPart,
  texts,
  type TempStore,
} from './helpers.js';
import { poll } from '../support/wait.js';

/**
 * Several harness instances on one PostgreSQL database: each opens its own store (its own pool
 * and caches) on the same schema, and each must see what the others wrote and lose none of it,
 * whether they write in turn or at the same moment.
 */

const alice = callContext('alice');

describe('a store shared by several instances (PostgreSQL)', POSTGRESQL.needs, () => {
  let temp: TempStore;
  let a: Store;
  let b: Store;
  beforeEach(async () => {
    temp = await tempStore(POSTGRESQL);
    a = temp.store;
    b = await temp.another();
  });
  afterEach(async () => {
    await temp.dispose();
  });

  it('each instance sees what the other wrote, writing in turn: history, artifacts, status, metadata, generation, lists', async () => {
    const task = newTask({ state: TaskState.TASK_STATE_WORKING });
    await a.tasks.create(task, alice);
    assert.deepStrictEqual(await b.tasks.load(task.id, alice), task);

    // B writes a reply on the task A keeps in memory.
    await b.tasks.append(task.id, alice, [
      statusUpdate(task, TaskState.TASK_STATE_INPUT_REQUIRED, reply(task, 'reply from B')),
    ]);
    let seen = (await a.tasks.read(task.id, alice))!;
    assert.deepStrictEqual(texts(seen.task.history), ['hello', 'reply from B']);
    assert.equal(seen.task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(seen.generation, 2);

    // A streams an artifact; B adds to it; A reads it whole.
    await a.tasks.append(task.id, alice, [
      artifactUpdate(task, artifact('answer', [textPart('one')])),
      taskEvent({ ...seen.task, history: [], metadata: { by: 'a' } }),
    ]);
    assert.deepStrictEqual((await b.tasks.load(task.id, alice))?.metadata, { by: 'a' });
    await b.tasks.append(task.id, alice, [artifactUpdate(task, artifact('answer', [textPart('two')]), true)]);
    seen = (await a.tasks.read(task.id, alice))!;
    assert.deepStrictEqual(
      seen.task.artifacts[0]?.parts.map((p) => p.content?.value),
      ['one', 'two'],
    );
    assert.equal(seen.generation, 5);

    // The status is the last one written, whichever instance wrote it.
    await a.tasks.append(task.id, alice, [statusUpdate(task, TaskState.TASK_STATE_WORKING, reply(task, 'A works'))]);
    assert.equal((await b.tasks.load(task.id, alice))?.status?.state, TaskState.TASK_STATE_WORKING);
    await b.tasks.modify(task.id, alice, () => ({
      history: [message(task.id, task.contextId, Role.ROLE_USER, '/status')],
      events: [statusUpdate(task, TaskState.TASK_STATE_WORKING, reply(task, 'working'))],
    }));

    const listed = await a.tasks.list(
      {
        tenant: '',
        contextId: '',
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageToken: '',
        statusTimestampAfter: undefined,
        includeArtifacts: true,
      },
      alice,
    );
    const stored = (await (await temp.another()).tasks.read(task.id, alice))!;
    assert.deepStrictEqual(listed.tasks, [stored.task]);
    assert.deepStrictEqual(await a.tasks.read(task.id, alice), stored);
    assert.deepStrictEqual(await b.tasks.read(task.id, alice), stored);
    assert.deepStrictEqual(texts(stored.task.history), ['hello', 'reply from B', 'A works', '/status', 'working']);
    assert.equal(stored.generation, 7);
  });

  it('loses nothing when both write the same task at once: a streamed turn on one, commands on the other', async () => {
    const task = newTask({ state: TaskState.TASK_STATE_WORKING });
    await a.tasks.create(task, alice);
    const CHUNKS = 20;
    const COMMANDS = 20;

    // A: a turn's events, each appended as the engine's turn writer does.
    const streaming = (async () => {
      await a.tasks.append(task.id, alice, [taskEvent({ ...task, history: [] })]);
      for (let i = 0; i < CHUNKS; i++)
        await a.tasks.append(task.id, alice, [
          artifactUpdate(task, artifact('answer', [textPart(`chunk ${i}`)]), i > 0),
        ]);
    })();
    // B: command messages and replies, each read-decide-write.
    const commands = (async () => {
      for (let i = 0; i < COMMANDS; i++) {
        await b.tasks.modify(task.id, alice, (current) => ({
          history: [message(task.id, task.contextId, Role.ROLE_USER, `/cmd ${i}`)],
          events: [statusUpdate(current, TaskState.TASK_STATE_WORKING, reply(task, `reply ${i}`))],
        }));
      }
    })();
    await Promise.all([streaming, commands]);

    const stored = (await (await temp.another()).tasks.read(task.id, alice))!;
    assert.deepStrictEqual(
      stored.task.artifacts[0]?.parts.map((p) => p.content?.value),
      Array.from({ length: CHUNKS }, (_, i) => `chunk ${i}`),
    );
    const history = texts(stored.task.history);
    assert.equal(new Set(stored.task.history.map((m) => m.messageId)).size, history.length, 'each message once');
    assert.deepStrictEqual(
      history.filter((t) => t.startsWith('/cmd') || t.startsWith('reply')),
      Array.from({ length: COMMANDS }, (_, i) => [`/cmd ${i}`, `reply ${i}`]).flat(),
      "B's messages, all, in the order B wrote them",
    );
    assert.equal(history[0], 'hello');
    assert.equal(stored.generation, 1 + 1 + CHUNKS + COMMANDS, 'one generation per event, whoever wrote it');
    assert.deepStrictEqual(await a.tasks.read(task.id, alice), stored);
    assert.deepStrictEqual(await b.tasks.read(task.id, alice), stored);
  });

  it('issue 23: a task read on another instance, then its log after the generation read, make the whole task: none missed, none twice', async () => {
    const task = newTask({ state: TaskState.TASK_STATE_WORKING });
    await a.tasks.create(task, alice);
    const CHUNKS = 30;
    // A: a turn's artifact chunks.
    const streaming = (async () => {
      for (let i = 0; i < CHUNKS; i++)
        await a.tasks.append(task.id, alice, [
          artifactUpdate(task, artifact('answer', [textPart(`chunk ${i}`)]), i > 0),
        ]);
    })();
    // B: replies, and the task read now and then.
    const snapshots: Array<{ task: Task; generation: number }> = [];
    const onB = (async () => {
      for (let i = 0; i < 10; i++) {
        await b.tasks.modify(task.id, alice, () => ({
          events: [statusUpdate(task, TaskState.TASK_STATE_WORKING, reply(task, `reply ${i}`))],
        }));
        snapshots.push((await b.tasks.read(task.id, alice))!);
      }
    })();
    await Promise.all([streaming, onB]);

    const log = await readLogAfter(b.db, task.id, 0);
    assert.deepStrictEqual(
      log.map((l) => l.generation),
      Array.from({ length: 1 + CHUNKS + 10 }, (_, i) => i + 1),
      'every event logged once, numbered from the creation on',
    );
    const whole = (await a.tasks.load(task.id, alice))!;
    for (const snapshot of snapshots) {
      // The snapshot with the events after its generation applied is the task as it ended.
      let rebuilt: Task | undefined = copyTask(snapshot.task);
      for (const { event } of log.filter((l) => l.generation > snapshot.generation))
        rebuilt = applyEvent(rebuilt, event) ?? rebuilt;
      assert.deepStrictEqual(rebuilt, whole, `read at generation ${snapshot.generation}`);
    }
  });

  it('modify is one step across instances: concurrent read-decide-writes on both lose no update', async () => {
    const task = { ...newTask(), metadata: { count: 0 } };
    await a.tasks.create(task, alice);
    const increment = (store: Store) =>
      store.tasks.modify(task.id, alice, (current) => ({
        events: [taskEvent({ ...current, history: [], metadata: { count: (current.metadata?.count as number) + 1 } })],
      }));
    const saved = await Promise.all(Array.from({ length: 40 }, (_, i) => increment(i % 2 === 0 ? a : b)));
    assert.deepStrictEqual(
      saved.map((t) => t?.task.metadata?.count).sort((x, y) => Number(x) - Number(y)),
      Array.from({ length: 40 }, (_, i) => i + 1),
    );
    assert.deepStrictEqual(
      saved.map((t) => t!.logged[0]!.generation - (t!.task.metadata!.count as number)),
      Array.from({ length: 40 }, () => 1),
      'each write logged at the generation after the one it decided on',
    );
    assert.deepStrictEqual((await b.tasks.load(task.id, alice))?.metadata, { count: 40 });
    assert.deepStrictEqual((await a.tasks.load(task.id, alice))?.metadata, { count: 40 });

    const { version } = await a.db
      .selectFrom('tasks')
      .select('version')
      .where('id', '=', task.id)
      .executeTakeFirstOrThrow();
    assert.equal(await b.tasks.modify(task.id, alice, () => undefined), undefined, 'nothing to save');
    assert.equal(
      (await a.db.selectFrom('tasks').select('version').where('id', '=', task.id).executeTakeFirstOrThrow()).version,
      version,
    );
    await assert.rejects(
      b.tasks.modify(task.id, callContext('bob'), () => ({ events: [] })),
      /Task not found/,
    );
    await assert.rejects(
      b.tasks.modify(randomUUID(), alice, () => ({ events: [] })),
      /Task not found/,
    );
    await assert.rejects(
      b.tasks.modify(task.id, alice, () => {
        throw new Error('the change failed');
      }),
      /the change failed/,
    );
    assert.deepStrictEqual((await a.tasks.load(task.id, alice))?.metadata, { count: 40 });
  });

  it('stores a new task once when two instances create it at the same moment: the other is refused', async () => {
    const task = newTask();
    const onA = { ...task, history: [...task.history, reply(task, 'from A')] };
    const onB = { ...task, history: [...task.history, reply(task, 'from B')] };
    const outcomes = await Promise.allSettled([a.tasks.create(onA, alice), b.tasks.create(onB, alice)]);
    assert.deepStrictEqual(outcomes.map((o) => o.status).sort(), ['fulfilled', 'rejected']);
    const refused = outcomes.find((o) => o.status === 'rejected')!;
    assert.equal((refused.reason as { code?: string }).code, 'store_failed');
    const winner = outcomes[0]!.status === 'fulfilled' ? onA : onB;
    const stored = (await (await temp.another()).tasks.read(task.id, alice))!;
    assert.deepStrictEqual(stored, { task: winner, generation: 1 });
    assert.deepStrictEqual(
      (await readLogAfter(a.db, task.id, 0)).map((l) => l.generation),
      [1],
    );
  });

  it('answers a model choice, usage and links as the other instance last wrote them, after reading them before', async () => {
    const context = { tenant: '', owner: 'alice', contextId: 'ctx' };
    await a.state.setTaskModel('t1', context, 'builtin:echo');
    assert.equal(await b.state.getTaskModel('t1'), 'builtin:echo');
    assert.equal(await b.state.getContextModel(context), 'builtin:echo');
    assert.deepStrictEqual(await b.state.getUsage('t1'), []);
    assert.deepStrictEqual(await b.state.getLinks('t1'), { parent: undefined, children: [] });

    await a.state.setTaskModel('t1', context, 'builtin:stats'); // a /model on instance A
    await a.state.addUsage('t1', { model: 'builtin:stats', inputTokens: 3, outputTokens: 4 });
    await linkSubtask(a.state, a.db, 't1', 'child');
    assert.equal(await b.state.getTaskModel('t1'), 'builtin:stats');
    assert.equal(await b.state.getContextModel(context), 'builtin:stats');
    assert.deepStrictEqual(await b.state.getUsage('t1'), [{ model: 'builtin:stats', inputTokens: 3, outputTokens: 4 }]);
    assert.deepStrictEqual(await b.state.getLinks('t1'), { parent: undefined, children: ['child'] });
  });

  it('listInterrupted leaves out a turn another instance wrote within unchangedForMs', async () => {
    const task = newTask({ state: TaskState.TASK_STATE_WORKING });
    await a.tasks.create(task, alice);
    assert.deepStrictEqual(await b.tasks.listInterrupted({ unchangedForMs: 60_000 }), []);
    assert.deepStrictEqual(
      (await b.tasks.listInterrupted()).map((t) => t.id),
      [task.id],
    );
  });

  it("modify waits for another instance's write of the task under way and decides on what it wrote (what recovery relies on)", async () => {
    const task = newTask({ state: TaskState.TASK_STATE_WORKING });
    await a.tasks.create(task, alice);
    // Instance C recovers; its connections carry a name, to see when it waits for the row lock.
    const name = `th-recovery-${randomUUID().slice(0, 8)}`;
    const url = new URL(temp.where.databaseUrl!);
    url.searchParams.set('application_name', name);
    const c = await openStore({ databaseUrl: url.toString() });
    try {
      await c.tasks.load(task.id, alice); // C keeps the task as it was
      // B holds the task's row (a new turn starting there) until C waits for it.
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let entered!: () => void;
      const holding = new Promise<void>((resolve) => (entered = resolve));
      const newTurn = b.tasks.modify(task.id, alice, async () => {
        entered();
        await released;
        return {
          history: [message(task.id, task.contextId, Role.ROLE_USER, 'a new turn')],
          events: [statusUpdate(task, TaskState.TASK_STATE_WORKING)],
        };
      });
      await holding;
      const seenByC: string[][] = [];
      const recovery = c.tasks.modify(task.id, alice, (current) => {
        seenByC.push(texts(current.history));
        // Recovery's rule: a task a new turn took meanwhile is left to it.
        if (current.history.length > 1) return undefined;
        return { events: [statusUpdate(task, TaskState.TASK_STATE_INPUT_REQUIRED, reply(task, 'interrupted'))] };
      });
      // The database server announces no lock wait: polled.
      await poll('instance C waits for the row lock', async () => {
        const { rows } = await sql<{
          waiting: number;
        }>`select count(*) as waiting from pg_stat_activity where application_name = ${name} and wait_event_type = 'Lock'`.execute(
          a.db,
        );
        return rows[0]!.waiting > 0;
      });
      release();
      await newTurn;
      assert.equal(await recovery, undefined);
      // C first decides on the image it keeps, in one statement guarded by its version (which
      // waits for B's lock, then finds the row moved on and writes nothing); then again, under
      // the row's lock, on what B wrote: that decision is the one that counts.
      assert.deepStrictEqual(seenByC.at(-1), ['hello', 'a new turn']);
      const stored = (await a.tasks.read(task.id, alice))!;
      assert.equal(stored.task.status?.state, TaskState.TASK_STATE_WORKING);
      assert.deepStrictEqual(texts(stored.task.history), ['hello', 'a new turn']);
      assert.equal(stored.generation, 2);
    } finally {
      await c.close();
    }
  });
});
