/**
 * Issue 39, schedules: `/schedule` and `/unschedule` end to end on one harness with a fake clock
 * (the scheduler ticks when the test says; nothing sleeps): the next three times, a due run as a
 * new task in the schedule's context with its model, catch-up and recorded skips, the bounds,
 * and a run that waits for a turn place instead of being dropped.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { REPLY_ERROR_KEY } from '../../src/wire.js';
import { lastMessage } from '../fixtures/model-server.js';
import { poll } from '../support/wait.js';
import { deduped, startReceiver } from './push-receiver.js';
import {
  dataOf,
  send,
  sendStream,
  startTestHarness,
  tasksInContext,
  textOf,
  userMessage,
  type TestHarness,
} from './support.js';

const START = Date.parse('2026-12-07T07:30:00Z');
let clock = START;
let h: TestHarness;
let client: Client;
let release: () => void;
/** Holds the replies to messages saying "hold next" until it settles. */
let holdsNext: Promise<void> = Promise.resolve();
const released = new Promise<void>((resolve) => (release = resolve));
/** Every line the harness logged, with its fields. */
const logged: string[] = [];
const line = (message: string, fields?: unknown) => void logged.push(`${message} ${JSON.stringify(fields ?? {})}`);

before(async () => {
  h = await startTestHarness({
    script: {
      reply: (body) => `re: ${String(lastMessage(body).content).slice(0, 40)}`,
      hold: (body) => {
        const text = String(lastMessage(body).content);
        if (text.includes('hold next')) return { afterChunks: 1, until: holdsNext };
        return text.includes('hold on') ? { afterChunks: 1, until: released } : undefined;
      },
    },
    config: {
      maxTurnsInFlight: 2,
      push: { allowPrivateNetworks: true },
      schedules: { maxPerUser: 4, catchUpMs: 600_000, pollMs: 60_000, timeZone: 'UTC' },
    },
    harness: { now: () => clock, log: { debug: line, info: line, warn: line, error: line } },
  });
  client = await h.client('JSONRPC');
});

after(async () => {
  release();
  await h?.close();
});

async function command(text: string, taskId?: string): Promise<{ text: string; data: any; task: Task }> {
  const task = await send(client, text, taskId ? { taskId } : {});
  return { text: textOf(task.status?.message), data: dataOf(task.status?.message), task };
}

async function removeAll(taskId: string): Promise<void> {
  const { data } = await command('/schedule', taskId);
  for (const s of data.schedules) await command(`/unschedule ${s.id}`, taskId);
}

async function ended(taskId: string): Promise<Task> {
  return poll(`task ${taskId} ended`, async () => {
    const task = await client.getTask({ tenant: '', id: taskId, historyLength: 10 });
    // A conversation's turn ends waiting for the next message.
    return task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED ? task : undefined;
  });
}

describe('issue 39: schedules', () => {
  it('issue 39: /schedule <cron> <prompt> names the next three run times; /schedule lists it; pause, resume, /unschedule', async () => {
    const first = await command('hello');
    const made = await command('/schedule "0 8 * * 1-5" summarise the issues', first.task.id);
    const id = made.data.schedule.id;
    assert.deepEqual(made.data.schedule.next, [
      '2026-12-07T08:00:00.000Z',
      '2026-12-08T08:00:00.000Z',
      '2026-12-09T08:00:00.000Z',
    ]);
    assert.match(made.text, /2026-12-07 08:00, 2026-12-08 08:00, 2026-12-09 08:00 \(UTC\)/);
    const listed = await command('/schedule', first.task.id);
    assert.deepEqual(
      listed.data.schedules.map((s: any) => [s.id, s.when, s.prompt]),
      [[id, '0 8 * * 1-5', 'summarise the issues']],
    );
    const paused = await command(`/schedule pause ${id}`, first.task.id);
    assert.equal(paused.data.schedule.paused, true);
    assert.deepEqual(paused.data.schedule.next, []);
    const resumed = await command(`/schedule resume ${id}`, first.task.id);
    assert.equal(resumed.data.schedule.next[0], '2026-12-07T08:00:00.000Z');
    const removed = await command(`/unschedule ${id}`, first.task.id);
    assert.equal(removed.data.removed, id);
    assert.deepEqual((await command('/schedule', first.task.id)).data.schedules, []);
    const again = await command(`/unschedule ${id}`, first.task.id);
    assert.equal(again.data[REPLY_ERROR_KEY], 'schedule_not_found');
  });

  it('issue 39: every 2h and at <time> with a time zone; a schedule of another user is not seen', async () => {
    const first = await command('hello');
    const every = await command('/schedule every 2h check the feed', first.task.id);
    assert.deepEqual(
      every.data.schedule.next,
      [START + 2 * 3_600_000, START + 4 * 3_600_000, START + 6 * 3_600_000].map((ms) => new Date(ms).toISOString()),
    );
    const at = await command('/schedule tz=Europe/Paris at 2026-12-24T17:00 remind me', first.task.id);
    assert.deepEqual(at.data.schedule.next, ['2026-12-24T16:00:00.000Z']);
    assert.equal(at.data.schedule.timeZone, 'Europe/Paris');
    await removeAll(first.task.id);
  });

  it('issue 39: the bounds: no interval below one minute, schedules.maxPerUser, a when that does not read', async () => {
    const first = await command('hello');
    for (const when of [
      'every 30s',
      'every 0m',
      '"* * * * * *"',
      '"*/30 * * * * *"',
      '"61 * * * *"',
      'at 2020-01-01T00:00',
    ])
      assert.equal(
        (await command(`/schedule ${when} too often`, first.task.id)).data[REPLY_ERROR_KEY],
        'when_invalid',
        when,
      );
    assert.equal((await command('/schedule "61 * * * *" bad', first.task.id)).data[REPLY_ERROR_KEY], 'when_invalid');
    assert.equal(
      (await command('/schedule at 2020-01-01T00:00 past', first.task.id)).data[REPLY_ERROR_KEY],
      'when_invalid',
    );
    assert.equal(
      (await command('/schedule tz=Nowhere/City every 1h x', first.task.id)).data[REPLY_ERROR_KEY],
      'when_invalid',
    );
    for (let i = 0; i < 4; i++) await command(`/schedule every 1h run ${i}`, first.task.id);
    const fifth = await command('/schedule every 1h one too many', first.task.id);
    assert.equal(fifth.data[REPLY_ERROR_KEY], 'too_many');
    await removeAll(first.task.id);
  });

  it("issue 39: a due run is a new task in the schedule's context, as its user, with its model; it runs once", async () => {
    const first = await command('hello');
    await command('/model fixture:large', first.task.id);
    const made = await command('/schedule every 1h summarise the night', first.task.id);
    clock = START + 3_600_000 + 10;
    await h.harness.scheduler!.tick();
    await h.harness.scheduler!.tick();
    const runs = await poll('the run', async () =>
      (await tasksInContext(client, first.task.contextId)).filter((t) => t.id !== first.task.id),
    );
    assert.equal(runs.length, 1);
    const run = await ended(runs[0]!.id);
    assert.equal(textOf(run.history?.find((m) => m.role === 1)), 'summarise the night');
    const asked = h.chatRequests().filter((r) => String(lastMessage(r).content) === 'summarise the night');
    assert.equal(asked.length, 1);
    assert.equal(asked[0].model, 'large');
    const listed = await command('/schedule', first.task.id);
    assert.equal(listed.data.schedules[0].lastRun.taskId, run.id);
    assert.equal(listed.data.schedules[0].id, made.data.schedule.id);
    await removeAll(first.task.id);
  });

  it('issue 39: down through a due time: within catchUpMs it runs once; beyond, a recorded skip that /schedule shows; runs counted by outcome', async () => {
    const first = await command('hello');
    clock = START;
    await command('/schedule every 1h caught up', first.task.id);
    await command('/schedule every 2h too late', first.task.id);
    // Three hours on: the hourly one's latest due time is 5 minutes back (runs once, two earlier ones skipped);
    // the two-hourly one's is an hour back (skipped).
    clock = START + 3 * 3_600_000 + 300_000;
    await h.harness.scheduler!.tick();
    await h.harness.scheduler!.settled();
    const ran = await poll('the caught-up run', async () =>
      (await tasksInContext(client, first.task.contextId)).filter((t) =>
        t.history?.some((m) => textOf(m) === 'caught up'),
      ),
    );
    assert.equal(ran.length, 1);
    await ended(ran[0]!.id);
    assert.equal(
      (await tasksInContext(client, first.task.contextId)).filter((t) =>
        t.history?.some((m) => textOf(m) === 'too late'),
      ).length,
      0,
    );
    const schedules = (await command('/schedule', first.task.id)).data.schedules;
    const listed = ['caught up', 'too late'].map((prompt) => schedules.find((s: any) => s.prompt === prompt));
    assert.deepEqual(listed[0].lastSkip, { dueAt: new Date(START + 3_600_000).toISOString(), missed: 2 });
    assert.deepEqual(listed[1].lastSkip, { dueAt: new Date(START + 2 * 3_600_000).toISOString(), missed: 1 });
    assert.equal(listed[1].lastRun, undefined);
    assert.match((await command('/schedule', first.task.id)).text, /Skipped: 1 run from/);
    // Runs counted by outcome: the three due times skipped, the run's task ending as a conversation's turn does.
    await h.harness.scheduler!.settled();
    const metrics = await (await fetch(`${h.harness.url}/metrics`)).text();
    assert.match(metrics, /^tiny_harness_schedule_runs_total\{outcome="skipped"\} 3$/m);
    assert.match(metrics, /^tiny_harness_schedule_runs_total\{outcome="input_required"\} [1-9]\d*$/m);
    await removeAll(first.task.id);
  });

  it('issue 39: at the turn bound (maxTurnsInFlight, 2 here) a due run waits, then runs once a place is free', async () => {
    const first = await command('hello');
    clock = START;
    await command('/schedule every 1h waited for', first.task.id);
    // Both places taken by held turns.
    const held = [sendStream(client, 'hold on'), sendStream(client, 'hold on too')];
    for (const stream of held) await stream.next();
    clock = START + 3_600_000 + 5;
    await h.harness.scheduler!.tick();
    assert.equal(h.harness.scheduler!.waitingRuns, 1);
    release();
    for (const stream of held) for await (const _ of stream);
    const ran = await poll('the waiting run', async () =>
      (await tasksInContext(client, first.task.contextId)).filter((t) =>
        t.history?.some((m) => textOf(m) === 'waited for'),
      ),
    );
    await ended(ran[0]!.id);
    assert.equal(h.harness.scheduler!.waitingRuns, 0);
    await removeAll(first.task.id);
  });

  it("issue 39: the push configs of the task /schedule was sent to deliver a run's events, with no client connected", async () => {
    const receiver = await startReceiver();
    try {
      const first = await command('hello');
      await client.createTaskPushNotificationConfig({
        tenant: '',
        id: 'hook',
        taskId: first.task.id,
        url: receiver.url,
        token: 'the-token',
        authentication: undefined,
      });
      clock = START;
      await command('/schedule every 1h pushed run', first.task.id);
      clock = START + 3_600_000 + 5;
      await h.harness.scheduler!.tick();
      const ofRun = () =>
        deduped(receiver.received).filter(
          (x) => (x.body.task?.id ?? x.body.statusUpdate?.taskId ?? x.body.artifactUpdate?.taskId) !== first.task.id,
        );
      await poll("the run's end pushed", () =>
        ofRun().some(
          (x) => x.kind === 'statusUpdate' && /INPUT_REQUIRED/.test(String(x.body.statusUpdate.status?.state)),
        ),
      );
      const events = ofRun();
      assert.equal(events[0]!.kind, 'task');
      assert.match(JSON.stringify(events[0]!.body.task.history), /pushed run/);
      assert.deepEqual(
        events.map((x) => x.generation),
        events.map((_, i) => i + 1),
      );
      assert.equal(events[0]!.headers['x-a2a-notification-token'], 'the-token');
      await removeAll(first.task.id);
    } finally {
      await receiver.close();
    }
  });

  it('issue 39: a push config given with /schedule is kept with the schedule: every run is pushed to it, with no client connected, once', async () => {
    const receiver = await startReceiver();
    try {
      const first = await command('hello');
      clock = START;
      const hook = { tenant: '', id: 'given', taskId: '', url: receiver.url, token: 'schedule-token' };
      const made = (await client.sendMessage({
        tenant: '',
        message: userMessage('/schedule every 1h given a hook', { taskId: first.task.id }),
        configuration: {
          acceptedOutputModes: [],
          taskPushNotificationConfig: { ...hook, authentication: undefined },
          returnImmediately: false,
        },
        metadata: {},
      })) as Task;
      const id = dataOf(made.status?.message).schedule.id as string;
      assert.equal(dataOf(made.status?.message).schedule.webhooks, 1);
      assert.match(textOf(made.status?.message), /pushed to the webhook given with \/schedule/);
      assert.doesNotMatch(JSON.stringify(made), /schedule-token/);
      // Set on the task /schedule was sent to as well, as a message's config is (A2A); taken off
      // it here, the schedule still has its own.
      const onTask = await client.listTaskPushNotificationConfig({
        tenant: '',
        taskId: first.task.id,
        pageSize: 0,
        pageToken: '',
      });
      assert.deepEqual(
        onTask.configs.map((c) => c.id),
        ['given'],
      );
      await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: first.task.id, id: 'given' });
      const runs = () =>
        receiver.received.filter(
          (x) => (x.body.task?.id ?? x.body.statusUpdate?.taskId ?? x.body.artifactUpdate?.taskId) !== first.task.id,
        );
      const runEnded = (taskId: string) =>
        runs().some(
          (x) =>
            x.kind === 'statusUpdate' &&
            x.body.statusUpdate.taskId === taskId &&
            /INPUT_REQUIRED/.test(String(x.body.statusUpdate.status?.state)),
        );
      const lastRunTask = async () => {
        const { data } = await command('/schedule', first.task.id);
        return (data.schedules as Array<{ id: string; lastRun?: { taskId: string } }>).find((s) => s.id === id)!
          .lastRun!.taskId;
      };
      clock = START + 3_600_000 + 5;
      await h.harness.scheduler!.tick();
      const one = await lastRunTask();
      await poll("the first run's end pushed", () => runEnded(one));
      const ofOne = runs().filter((x) => JSON.stringify(x.body).includes(one));
      assert.equal(ofOne[0]!.kind, 'task');
      assert.match(JSON.stringify(ofOne[0]!.body.task.history), /given a hook/);
      assert.deepEqual(
        ofOne.map((x) => x.generation),
        ofOne.map((_, i) => i + 1),
      );
      assert.ok(ofOne.every((x) => x.headers['x-a2a-notification-token'] === 'schedule-token'));
      // The same webhook set on the task again: the next run is pushed to it once, not twice.
      await client.createTaskPushNotificationConfig({
        ...hook,
        id: 'again',
        taskId: first.task.id,
        authentication: undefined,
      });
      clock = START + 2 * 3_600_000 + 5;
      await h.harness.scheduler!.tick();
      const two = await lastRunTask();
      assert.notEqual(two, one);
      await poll("the second run's end pushed", () => runEnded(two));
      const ofTwo = runs().filter((x) => JSON.stringify(x.body).includes(two));
      assert.deepEqual(
        ofTwo.map((x) => x.generation),
        ofTwo.map((_, i) => i + 1),
      );
      assert.ok(!logged.some((entry) => entry.includes('schedule-token')), 'the token is never logged');
      await removeAll(first.task.id);
    } finally {
      await receiver.close();
    }
  });

  it('issue 39: a run waiting for a turn place is not started once its schedule is removed', async () => {
    const first = await command('hello');
    clock = START;
    const made = await command('/schedule every 1h removed while waiting', first.task.id);
    let hold!: () => void;
    const holding = new Promise<void>((resolve) => (hold = resolve));
    holdsNext = holding;
    const held = [sendStream(client, 'hold next'), sendStream(client, 'hold next too')];
    for (const stream of held) await stream.next();
    clock = START + 3_600_000 + 5;
    await h.harness.scheduler!.tick();
    assert.equal(h.harness.scheduler!.waitingRuns, 1);
    await command(`/unschedule ${made.data.schedule.id}`, first.task.id);
    hold();
    for (const stream of held) for await (const _ of stream);
    await h.harness.scheduler!.tick();
    assert.equal(h.harness.scheduler!.waitingRuns, 0);
    const ran = (await tasksInContext(client, first.task.contextId)).filter((t) =>
      t.history?.some((m) => textOf(m) === 'removed while waiting'),
    );
    assert.equal(ran.length, 0);
  });
});
