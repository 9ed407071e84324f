import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { AgentEvent, ResultManager } from '@a2a-js/sdk/server';
import { sql } from 'kysely';
import { seqOf } from '../../src/event-seq.js';
import { openStore, type Store } from '../../src/store/index.js';
import {
  artifact,
  callContext,
  linkSubtask,
  message,
  newTask,
  POSTGRESQL,
  tempStore,
  textPart,
  type TempStore,
} from './helpers.js';
import { poll } from '../support/wait.js';

/**
 * Several harness instances on one PostgreSQL database: each opens its own store (its own pool
 * and caches) on the same schema, and each must see what the others wrote and lose none of it,
 * whether they write in turn or at the same moment.
 */

const alice = callContext('alice');

function texts(messages: readonly Message[]): string[] {
  return messages.map((m) => String(m.parts[0]?.content?.value));
}

function statusWith(task: Task, state: TaskState, text: string): { task: Task; reply: Message } {
  const reply = message(task.id, task.contextId, Role.ROLE_AGENT, text);
  return {
    task: {
      ...task,
      status: { state, message: reply, timestamp: new Date().toISOString() },
      history: [...task.history, reply],
    },
    reply,
  };
}

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

  it('each instance sees what the other wrote, writing in turn: history, artifacts, status, metadata, lists', async () => {
    const task = newTask({ state: TaskState.TASK_STATE_WORKING });
    await a.tasks.save(task, alice);
    assert.deepStrictEqual(await b.tasks.load(task.id, alice), task);

    // B writes a reply on the task A keeps in memory.
    const fromB = statusWith(
      (await b.tasks.load(task.id, alice))!,
      TaskState.TASK_STATE_INPUT_REQUIRED,
      'reply from B',
    );
    await b.tasks.save(fromB.task, alice);
    let seen = (await a.tasks.load(task.id, alice))!;
    assert.deepStrictEqual(texts(seen.history), ['hello', 'reply from B']);
    assert.equal(seen.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);

    // A streams an artifact; B adds to it; A reads it whole.
    seen.artifacts = [artifact('answer', [textPart('one')])];
    seen.metadata = { by: 'a' };
    await a.tasks.save(seen, alice);
    const onB = (await b.tasks.load(task.id, alice))!;
    assert.deepStrictEqual(onB.metadata, { by: 'a' });
    onB.artifacts[0]!.parts.push(textPart('two'));
    await b.tasks.save(onB, alice);
    seen = (await a.tasks.load(task.id, alice))!;
    assert.deepStrictEqual(
      seen.artifacts[0]?.parts.map((p) => p.content?.value),
      ['one', 'two'],
    );

    // The status is the last one saved, whichever instance saved it.
    await a.tasks.save(statusWith(seen, TaskState.TASK_STATE_WORKING, 'A works').task, alice);
    assert.equal((await b.tasks.load(task.id, alice))?.status?.state, TaskState.TASK_STATE_WORKING);
    await b.tasks.appendMessage(task.id, message(task.id, task.contextId, Role.ROLE_USER, '/status'), alice);

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
    const stored = (await (await temp.another()).tasks.load(task.id, alice))!;
    assert.deepStrictEqual(listed.tasks, [stored]);
    assert.deepStrictEqual(await a.tasks.load(task.id, alice), stored);
    assert.deepStrictEqual(await b.tasks.load(task.id, alice), stored);
    assert.deepStrictEqual(texts(stored.history), ['hello', 'reply from B', 'A works', '/status']);
  });

  it('loses nothing when both write the same task at once: a streamed turn on one, commands on the other', async () => {
    const task = newTask({ state: TaskState.TASK_STATE_WORKING });
    await a.tasks.save(task, alice);
    const CHUNKS = 20;
    const COMMANDS = 20;

    // A: a turn, as the SDK's result manager runs it (its task kept in memory between events).
    const turn = new ResultManager(a.tasks, alice);
    const streaming = (async () => {
      await turn.processEvent(AgentEvent.task((await a.tasks.load(task.id, alice))!));
      for (let i = 0; i < CHUNKS; i++) {
        const chunk = artifact('answer', [textPart(`chunk ${i}`)]);
        await turn.processEvent(
          AgentEvent.artifactUpdate({
            taskId: task.id,
            contextId: task.contextId,
            artifact: chunk,
            append: i > 0,
            lastChunk: i === CHUNKS - 1,
            metadata: undefined,
          }),
        );
      }
    })();
    // B: command messages and replies, each read-decide-write.
    const commands = (async () => {
      for (let i = 0; i < COMMANDS; i++) {
        await b.tasks.appendMessage(task.id, message(task.id, task.contextId, Role.ROLE_USER, `/cmd ${i}`), alice);
        await b.tasks.modify(
          task.id,
          alice,
          (current) => statusWith(current, TaskState.TASK_STATE_WORKING, `reply ${i}`).task,
        );
      }
    })();
    await Promise.all([streaming, commands]);

    const stored = (await (await temp.another()).tasks.load(task.id, alice))!;
    assert.deepStrictEqual(
      stored.artifacts[0]?.parts.map((p) => p.content?.value),
      Array.from({ length: CHUNKS }, (_, i) => `chunk ${i}`),
    );
    const history = texts(stored.history);
    assert.equal(new Set(stored.history.map((m) => m.messageId)).size, history.length, 'each message once');
    assert.deepStrictEqual(
      history.filter((t) => t.startsWith('/cmd') || t.startsWith('reply')),
      Array.from({ length: COMMANDS }, (_, i) => [`/cmd ${i}`, `reply ${i}`]).flat(),
      "B's messages, all, in the order B wrote them",
    );
    assert.equal(history[0], 'hello');
    assert.deepStrictEqual(await a.tasks.load(task.id, alice), stored);
    assert.deepStrictEqual(await b.tasks.load(task.id, alice), stored);
  });

  it('a task read on another instance, then its events after the seq it is marked with, make the whole turn: none missed, none twice', async () => {
    const task = newTask({ state: TaskState.TASK_STATE_WORKING });
    await a.tasks.save(task, alice);
    const CHUNKS = 30;
    const turn = new ResultManager(a.tasks, alice);
    // A: a turn's events, each queued as its bus hands it on, then stored by the result manager.
    const streaming = (async () => {
      for (let i = 0; i < CHUNKS; i++) {
        const event = AgentEvent.artifactUpdate({
          taskId: task.id,
          contextId: task.contextId,
          artifact: artifact('answer', [textPart(`chunk ${i}`)]),
          append: i > 0,
          lastChunk: i === CHUNKS - 1,
          metadata: undefined,
        });
        a.events!.queue(task.id, event);
        await turn.processEvent(event);
      }
    })();
    // B: replies handed on with the writes that store them, and the task read now and then.
    const snapshots: Task[] = [];
    const onB = (async () => {
      for (let i = 0; i < 10; i++) {
        const reply = message(task.id, task.contextId, Role.ROLE_AGENT, `reply ${i}`);
        const update = {
          taskId: task.id,
          contextId: task.contextId,
          status: { state: TaskState.TASK_STATE_WORKING, message: reply, timestamp: new Date().toISOString() },
          metadata: {},
        };
        await b.tasks.modify(
          task.id,
          alice,
          (current) => ({ ...current, status: update.status, history: [...current.history, reply] }),
          () => [AgentEvent.statusUpdate(update)],
        );
        snapshots.push((await b.tasks.load(task.id, alice))!);
      }
    })();
    await Promise.all([streaming, onB]);
    await a.events!.handOnQueued(task.id);

    const rows = await b.db
      .selectFrom('task_events')
      .select(['seq', 'event_json'])
      .where('task_id', '=', task.id)
      .orderBy('seq')
      .execute();
    const events = rows.map((row) => ({
      seq: Number(row.seq),
      event: JSON.parse(row.event_json) as {
        artifactUpdate?: { artifact: { parts: { text: string }[] } };
        statusUpdate?: { status: { message: { parts: { text: string }[] } } };
      },
    }));
    assert.equal(events.length, CHUNKS + 10, 'every event handed on once');
    const chunks = Array.from({ length: CHUNKS }, (_, i) => `chunk ${i}`);
    for (const snapshot of snapshots) {
      const since = seqOf(snapshot);
      assert.ok(since !== undefined, 'a task read from the store is marked');
      const later = events.filter((e) => e.seq > since);
      const text = [
        ...(snapshot.artifacts[0]?.parts.map((p) => String(p.content?.value)) ?? []),
        ...later.flatMap((e) => e.event.artifactUpdate?.artifact.parts.map((p) => p.text) ?? []),
      ];
      assert.deepStrictEqual(text, chunks, 'the chunks in the task read, then the later events: each once, in order');
      const replies = [
        ...texts(snapshot.history).filter((t) => t.startsWith('reply')),
        ...later.flatMap((e) => (e.event.statusUpdate ? [e.event.statusUpdate.status.message.parts[0]!.text] : [])),
      ];
      assert.deepStrictEqual(
        replies,
        Array.from({ length: 10 }, (_, i) => `reply ${i}`),
      );
    }
  });

  it('modify is one step across instances: concurrent read-decide-writes on both lose no update', async () => {
    const task = { ...newTask(), metadata: { count: 0 } };
    await a.tasks.save(task, alice);
    const increment = (store: Store) =>
      store.tasks.modify(task.id, alice, (current) => ({
        ...current,
        metadata: { count: (current.metadata?.count as number) + 1 },
      }));
    const saved = await Promise.all(Array.from({ length: 40 }, (_, i) => increment(i % 2 === 0 ? a : b)));
    assert.deepStrictEqual(
      saved.map((t) => t?.metadata?.count).sort((x, y) => Number(x) - Number(y)),
      Array.from({ length: 40 }, (_, i) => i + 1),
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
      b.tasks.modify(task.id, callContext('bob'), (t) => t),
      /Task not found/,
    );
    await assert.rejects(
      b.tasks.modify(randomUUID(), alice, (t) => t),
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

  it('stores a new task once when two instances save it at the same moment, with what each added', async () => {
    const task = newTask();
    const onA = statusWith(task, TaskState.TASK_STATE_WORKING, 'from A').task;
    const onB = statusWith(task, TaskState.TASK_STATE_WORKING, 'from B').task;
    await Promise.all([a.tasks.save(onA, alice), b.tasks.save(onB, alice)]);
    const stored = (await (await temp.another()).tasks.load(task.id, alice))!;
    assert.deepStrictEqual(texts(stored.history).sort(), ['from A', 'from B', 'hello']);
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

  it('start-up recovery leaves alone a turn another instance wrote within unchangedForMs', async () => {
    const task = newTask({ state: TaskState.TASK_STATE_WORKING });
    await a.tasks.save(task, alice);
    assert.equal(await b.tasks.recoverInterrupted('interrupted', undefined, { unchangedForMs: 60_000 }), 0);
    assert.equal((await a.tasks.load(task.id, alice))?.status?.state, TaskState.TASK_STATE_WORKING);
  });

  it('recovery leaves alone a task another instance wrote between its listing and its row lock', async () => {
    const task = newTask({ state: TaskState.TASK_STATE_WORKING });
    await a.tasks.save(task, alice);
    // Instance C recovers; its connections carry a name, to see when it waits for the row lock.
    const name = `th-recovery-${randomUUID().slice(0, 8)}`;
    const url = new URL(temp.where.databaseUrl!);
    url.searchParams.set('application_name', name);
    const c = await openStore({ databaseUrl: url.toString() });
    try {
      // B holds the task's row (a new turn starting there) until C has listed it and waits.
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let entered!: () => void;
      const holding = new Promise<void>((resolve) => (entered = resolve));
      const newTurn = b.tasks.modify(task.id, alice, async (current) => {
        entered();
        await released;
        return {
          ...current,
          history: [...current.history, message(task.id, task.contextId, Role.ROLE_USER, 'a new turn')],
        };
      });
      await holding;
      const recovery = c.tasks.recoverInterrupted('interrupted', undefined, { taskIds: [task.id] });
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
      assert.equal(await recovery, 0);
      const stored = (await a.tasks.load(task.id, alice))!;
      assert.equal(stored.status?.state, TaskState.TASK_STATE_WORKING);
      assert.deepStrictEqual(texts(stored.history), ['hello', 'a new turn']);
    } finally {
      await c.close();
    }
  });
});
