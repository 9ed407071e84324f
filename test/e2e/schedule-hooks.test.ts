/**
 * Issue 39, trigger URLs: `/schedule hook <prompt>` over JSON-RPC gives a secret URL whose POST
 * starts a run, the body added to the prompt (text or JSON), answered 202 with the run's task id;
 * a wrong secret or an unknown hook is a 404, a body past `schedules.hookMaxBytes` a 413, a paused
 * hook a 409, the turn bound and a drain a 503 with Retry-After; `/unschedule` and rotation end
 * the URL; hooks count against `schedules.maxPerUser`; and the secret never reaches the log.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { createLogger } from '../../src/log.js';
import { REPLY_ERROR_KEY } from '../../src/wire.js';
import { lastMessage } from '../fixtures/model-server.js';
import { poll } from '../support/wait.js';
import { dataOf, send, sendStream, startTestHarness, textOf, type TestHarness } from './support.js';

const MAX_BYTES = 1024;
const secretOf = (url: string) => url.split('/').at(-1)!;
const lines: string[] = [];
/** Every secret a reply gave, to look for in the log. */
const secrets = new Set<string>();
let h: TestHarness;
let client: Client;
let release!: () => void;
const released = new Promise<void>((resolve) => (release = resolve));
let releaseMore!: () => void;
const releasedMore = new Promise<void>((resolve) => (releaseMore = resolve));
/** The turn held through the drain. */
let held: AsyncGenerator<unknown> | undefined;

before(async () => {
  h = await startTestHarness({
    script: {
      reply: (body) => `re: ${String(lastMessage(body).content).slice(0, 60)}`,
      hold: (body) => {
        const text = String(lastMessage(body).content);
        if (text.includes('hold more')) return { afterChunks: 1, until: releasedMore };
        return text.includes('hold on') ? { afterChunks: 1, until: released } : undefined;
      },
    },
    config: { maxTurnsInFlight: 2, drainTimeoutMs: 60_000, schedules: { maxPerUser: 5, hookMaxBytes: MAX_BYTES } },
    harness: { log: createLogger({ write: (line) => lines.push(line), pretty: false }) },
  });
  client = await h.client('JSONRPC');
});

after(async () => {
  release();
  releaseMore();
  await h?.close();
});

async function command(text: string, taskId?: string): Promise<{ text: string; data: any; task: Task }> {
  const task = await send(client, text, taskId ? { taskId } : {});
  const data = dataOf(task.status?.message);
  if (data?.schedule?.url) secrets.add(secretOf(data.schedule.url));
  return { text: textOf(task.status?.message), data, task };
}

function post(url: string, body?: string, type?: string, method = 'POST'): Promise<Response> {
  return fetch(url, { method, body, headers: type ? { 'content-type': type } : {} });
}

/** The run's task once its turn has ended (a conversation's turn ends waiting for input). */
async function ended(taskId: string): Promise<Task> {
  return poll(`task ${taskId} ended`, async () => {
    const task = await client.getTask({ tenant: '', id: taskId, historyLength: 10 });
    return task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED ? task : undefined;
  });
}

describe('issue 39: trigger URLs', () => {
  it('issue 39: /schedule hook gives a URL; a POST runs the prompt with the body, as a new task in the context, with its model', async () => {
    const first = await command('hello');
    await command('/model fixture:large', first.task.id);
    const made = await command('/schedule hook summarise this payload', first.task.id);
    const { id, url, when, next } = made.data.schedule;
    assert.equal(when, 'hook');
    assert.deepEqual(next, []);
    assert.match(url, new RegExp(`^${h.harness.url}/hooks/${id}/[A-Za-z0-9_-]{43}$`));
    assert.ok(made.text.includes(url));

    const answer = await post(url, 'line one\nline two', 'text/plain; charset=utf-8');
    assert.equal(answer.status, 202);
    const { taskId } = (await answer.json()) as { taskId: string };
    const run = await ended(taskId);
    assert.equal(run.contextId, first.task.contextId);
    const message = run.history?.find((m) => m.role === 1);
    assert.deepEqual(
      message?.parts.map((p) => p.content?.value),
      ['summarise this payload', 'line one\nline two'],
    );
    assert.equal(message?.metadata?.['tiny-harness/schedule']?.scheduleId, id);
    const asked = h.chatRequests().filter((r) => String(lastMessage(r).content).includes('line one'));
    assert.equal(asked.length, 1);
    assert.equal(asked[0].model, 'large');
    assert.equal(String(lastMessage(asked[0]).content), 'summarise this payload\nline one\nline two');

    // JSON: a data part after the prompt; no body: the prompt alone.
    const json = await post(url, JSON.stringify({ issue: 39, labels: ['a'] }), 'application/json');
    assert.equal(json.status, 202);
    const withData = await ended(((await json.json()) as { taskId: string }).taskId);
    assert.deepEqual(dataOf(withData.history?.find((m) => m.role === 1)), { issue: 39, labels: ['a'] });
    const bare = await post(url);
    assert.equal(bare.status, 202);
    const alone = await ended(((await bare.json()) as { taskId: string }).taskId);
    assert.equal(alone.history?.find((m) => m.role === 1)?.parts.length, 1);

    // Listed without its URL; its last run named.
    const listed = await command('/schedule', first.task.id);
    const hook = listed.data.schedules.find((s: any) => s.id === id);
    assert.equal(hook.when, 'hook');
    assert.equal(hook.url, undefined);
    assert.equal(hook.lastRun.taskId, alone.id);
    assert.ok(!listed.text.includes(secretOf(url)));
    await h.harness.scheduler!.settled();
    const metrics = await (await fetch(`${h.harness.url}/metrics`)).text();
    assert.match(metrics, /^tiny_harness_schedule_runs_total\{outcome="input_required"\} ([3-9]|\d\d+)$/m);
    await command(`/unschedule ${id}`, first.task.id);
  });

  it('issue 39: a wrong secret, an unknown hook, another method, an oversized body, a type that is not text or JSON', async () => {
    const first = await command('hello');
    const { url, id } = (await command('/schedule hook --new-context check it', first.task.id)).data.schedule;
    const secret = secretOf(url);
    const wrong = url.replace(secret, `${secret[0] === 'A' ? 'B' : 'A'}${secret.slice(1)}`);
    assert.equal((await post(wrong, 'x', 'text/plain')).status, 404);
    assert.equal((await post(url.replace(id, 's0123456789'), 'x', 'text/plain')).status, 404);
    assert.equal((await post(`${h.harness.url}/hooks/${id}`, 'x', 'text/plain')).status, 404);
    const get = await post(url, undefined, undefined, 'GET');
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST');
    assert.equal((await post(url, 'x'.repeat(MAX_BYTES + 1), 'text/plain')).status, 413);
    assert.equal((await post(url, 'x'.repeat(MAX_BYTES), 'text/plain')).status, 202);
    assert.equal((await post(url, 'a=b', 'application/x-www-form-urlencoded')).status, 415);
    assert.equal((await post(url, '{"a":', 'application/json')).status, 400);
    // --new-context: each run in a context of its own.
    const answer = await post(url, 'fresh', 'text/plain');
    const run = await ended(((await answer.json()) as { taskId: string }).taskId);
    assert.notEqual(run.contextId, first.task.contextId);
    await command(`/unschedule ${id}`, first.task.id);
  });

  it('issue 39: paused, a hook answers 409 and runs nothing; resumed, it runs; rotated, the old URL is a 404; removed, a 404', async () => {
    const first = await command('hello');
    const { url, id } = (await command('/schedule hook paused or not', first.task.id)).data.schedule;
    await command(`/schedule pause ${id}`, first.task.id);
    const paused = await post(url, 'while paused', 'text/plain');
    assert.equal(paused.status, 409);
    assert.equal(((await paused.json()) as any).error.status, 'FAILED_PRECONDITION');
    await command(`/schedule resume ${id}`, first.task.id);
    assert.equal((await post(url, 'resumed', 'text/plain')).status, 202);
    const rotated = await command(`/schedule hook rotate ${id}`, first.task.id);
    const fresh = rotated.data.schedule.url;
    assert.notEqual(fresh, url);
    assert.equal((await post(url, 'old', 'text/plain')).status, 404);
    assert.equal((await post(fresh, 'new', 'text/plain')).status, 202);
    assert.equal(
      (await command(`/schedule hook rotate s0123456789`, first.task.id)).data[REPLY_ERROR_KEY],
      'schedule_not_found',
    );
    await command(`/unschedule ${id}`, first.task.id);
    assert.equal((await post(fresh, 'gone', 'text/plain')).status, 404);
    const ran = h.chatRequests().map((r) => String(lastMessage(r).content));
    assert.ok(ran.some((text) => text.endsWith('resumed')));
    for (const text of ['while paused', 'old', 'gone']) assert.ok(!ran.some((t) => t.endsWith(text)), text);
  });

  it('issue 39: hooks count against schedules.maxPerUser; /schedule hook with no prompt is a usage error', async () => {
    const first = await command('hello');
    await command('/schedule every 1h a timed one', first.task.id);
    for (let i = 0; i < 4; i++) await command(`/schedule hook hook ${i}`, first.task.id);
    const sixth = await command('/schedule hook one too many', first.task.id);
    assert.equal(sixth.data[REPLY_ERROR_KEY], 'too_many');
    const bare = await command('/schedule hook', first.task.id);
    assert.match(bare.text, /Say what to run/);
    for (const s of (await command('/schedule', first.task.id)).data.schedules)
      await command(`/unschedule ${s.id}`, first.task.id);
  });

  it('issue 39: at the turn bound a POST is a 503 with Retry-After, and nothing of it is kept', async () => {
    const first = await command('hello');
    const { url, id } = (await command('/schedule hook at the bound', first.task.id)).data.schedule;
    // Both places (maxTurnsInFlight 2) taken; the first stays held through the drain below.
    const [more, on] = [sendStream(client, 'hold more'), sendStream(client, 'hold on')];
    await more.next();
    await on.next();
    held = on;
    const refused = await post(url, 'refused', 'text/plain');
    assert.equal(refused.status, 503);
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    assert.match(((await refused.json()) as any).error.message, /at its limit of 2 running turns/);
    const listed = (await command('/schedule', first.task.id)).data.schedules.find((s: any) => s.id === id);
    assert.equal(listed.lastRun, undefined);
    assert.ok(!h.chatRequests().some((r) => String(lastMessage(r).content).endsWith('refused')));
    releaseMore();
    for await (const _ of more);
  });

  it('issue 39: while the harness drains a POST is a 503 with Retry-After', async () => {
    const { url } = (await command('/schedule hook while draining')).data.schedule;
    // The last test on the harness: it drains with a turn still held (drainTimeoutMs 60 s).
    const closing = h.harness.close();
    // A place is free once the turn released above has given it back; until then the bound refuses.
    await poll('a POST refused as the harness drains', async () => {
      const answer = await post(url, 'while draining', 'text/plain');
      assert.equal(answer.status, 503);
      assert.ok(Number(answer.headers.get('retry-after')) > 0);
      return /shutting down/.test(((await answer.json()) as any).error.message);
    });
    release();
    for await (const _ of held!);
    await closing;
  });

  it("issue 39: no log line holds a hook's secret; a hook's request is logged with its id and the secret redacted", () => {
    const urls = lines.join('\n').match(/\/hooks\/[^"\s]*/g) ?? [];
    assert.ok(urls.length > 0);
    for (const logged of urls) assert.match(logged, /^\/hooks\/(s[0-9a-f]{10}|…)(\/…)?$/);
    assert.ok(secrets.size >= 4);
    for (const secret of secrets) assert.ok(!lines.some((line) => line.includes(secret)));
  });
});
