/**
 * Issue 39, a hook's idempotency keys (docs/schedules.md, "Trigger URLs"): a POST with an
 * `Idempotency-Key` runs once per hook and key; its repeat is answered 202 with the first run's
 * task id, `repeated: true`, starting nothing; with another body, 422; another key, or none, runs
 * again; a key that is not 1 to 200 printable ASCII characters is a 400; GitHub's
 * `X-GitHub-Delivery` counts as a key; a key past `schedules.hookKeyRetentionMs` runs again; and
 * the log names the key, never beside the secret. Several instances: schedule-hook-keys-instances.test.ts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { createLogger } from '../../src/log.js';
import { lastMessage } from '../fixtures/model-server.js';
import { poll } from '../support/wait.js';
import { send, startTestHarness, dataOf, type TestHarness } from './support.js';

const RETENTION_MS = 60_000;
const lines: string[] = [];
let h: TestHarness;
let client: Client;
/** Added to the schedules' clock: a key's time passes without waiting for it. */
let shift = 0;

before(async () => {
  h = await startTestHarness({
    script: { reply: (body) => `re: ${String(lastMessage(body).content).slice(0, 80)}` },
    config: { schedules: { hookKeyRetentionMs: RETENTION_MS } },
    harness: {
      log: createLogger({ write: (line) => lines.push(line), pretty: false }),
      now: () => Date.now() + shift,
    },
  });
  client = await h.client('JSONRPC');
});

after(async () => {
  await h?.close();
});

async function hook(prompt: string): Promise<{ id: string; url: string }> {
  const first = await send(client, 'hello');
  const made = await send(client, `/schedule hook ${prompt}`, { taskId: first.id });
  return dataOf(made.status?.message).schedule;
}

function post(url: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', body, headers: { 'content-type': 'text/plain', ...headers } });
}

/** How many times the model was asked to run `text` (each run asks once). */
const asked = (text: string) => h.chatRequests().filter((r) => String(lastMessage(r).content).endsWith(text)).length;

async function ended(taskId: string): Promise<Task> {
  return poll(`task ${taskId} ended`, async () => {
    // The 202 comes once the turn has started, maybe before its first write.
    const task = await client.getTask({ tenant: '', id: taskId, historyLength: 10 }).catch(() => undefined);
    return task?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED ? task : undefined;
  });
}

describe("issue 39: a hook's idempotency keys", () => {
  it('issue 39: the same Idempotency-Key twice starts one run; the second answer names it, repeated; another body is a 422', async () => {
    const { url } = await hook('count this');
    const key = '3f1c2a8e-5b7d-4e0a-9c61-2d8f4b7a1e90';
    const first = await post(url, 'once only', { 'idempotency-key': key });
    assert.equal(first.status, 202);
    assert.equal(first.headers.get('idempotent-replayed'), null);
    const { taskId } = (await first.json()) as { taskId: string; repeated?: boolean };
    await ended(taskId);
    const again = await post(url, 'once only', { 'Idempotency-Key': key });
    assert.equal(again.status, 202);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(await again.json(), { taskId, repeated: true });
    // Another body under the same key: refused, nothing run.
    const other = await post(url, 'something else', { 'idempotency-key': key });
    assert.equal(other.status, 422);
    const refusal = ((await other.json()) as any).error;
    assert.equal(refusal.code, 422);
    assert.match(refusal.message, new RegExp(`another body; its run is task ${taskId}`));
    assert.equal(asked('once only'), 1);
    assert.equal(asked('something else'), 0);
    // The key is logged with the run; no line holds both the key and the secret.
    const secret = url.split('/').at(-1)!;
    assert.ok(lines.some((line) => line.includes('a hook started a run') && line.includes(key)));
    assert.ok(lines.some((line) => line.includes('repeated an idempotency key') && line.includes(taskId)));
    assert.ok(!lines.some((line) => line.includes(secret)));
  });

  it('issue 39: different keys start two runs; without a key each POST runs, as before', async () => {
    const { url } = await hook('count these');
    const answers = await Promise.all(
      ['key-a', 'key-b'].map(async (key) => (await post(url, 'two keys', { 'idempotency-key': key })).json()),
    );
    const ids = (answers as Array<{ taskId: string; repeated?: boolean }>).map((a) => a.taskId);
    assert.notEqual(ids[0], ids[1]);
    assert.ok(answers.every((a: any) => a.repeated === undefined));
    for (const id of ids) await ended(id);
    assert.equal(asked('two keys'), 2);
    const bare = [await post(url, 'no key'), await post(url, 'no key')];
    const bareIds = await Promise.all(bare.map(async (a) => ((await a.json()) as { taskId: string }).taskId));
    assert.notEqual(bareIds[0], bareIds[1]);
    for (const id of bareIds) await ended(id);
    assert.equal(asked('no key'), 2);
  });

  it('issue 39: a key that is not 1 to 200 printable ASCII characters is a 400 and runs nothing; 200 is taken', async () => {
    const { url } = await hook('check keys');
    for (const key of ['', 'x'.repeat(201), 'tab\there', 'caf\u00e9']) {
      const answer = await post(url, 'bad key', { 'idempotency-key': key });
      assert.equal(answer.status, 400, JSON.stringify(key));
      assert.match(
        ((await answer.json()) as any).error.message,
        /Idempotency-Key header must be 1 to 200 printable ASCII/,
      );
    }
    assert.equal(asked('bad key'), 0);
    const longest = await post(url, 'longest key', { 'idempotency-key': `${'k'.repeat(199)}~` });
    assert.equal(longest.status, 202);
    await ended(((await longest.json()) as { taskId: string }).taskId);
  });

  it("issue 39: GitHub's X-GitHub-Delivery is a key: a redelivery runs nothing", async () => {
    const { url } = await hook('a push event');
    const headers = { 'content-type': 'application/json', 'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958' };
    const body = JSON.stringify({ ref: 'refs/heads/main' });
    const first = (await (await fetch(url, { method: 'POST', body, headers })).json()) as { taskId: string };
    await ended(first.taskId);
    const redelivered = await fetch(url, { method: 'POST', body, headers });
    assert.deepEqual(await redelivered.json(), { taskId: first.taskId, repeated: true });
    assert.equal(h.chatRequests().filter((r) => JSON.stringify(r.messages).includes('refs/heads/main')).length, 1);
  });

  it('issue 39: a key past schedules.hookKeyRetentionMs starts a new run', async () => {
    const { url } = await hook('kept a while');
    const first = (await (await post(url, 'retention', { 'idempotency-key': 'day-old' })).json()) as any;
    await ended(first.taskId);
    shift += RETENTION_MS - 1000;
    const within = (await (await post(url, 'retention', { 'idempotency-key': 'day-old' })).json()) as any;
    assert.deepEqual(within, { taskId: first.taskId, repeated: true });
    shift += 2000;
    const past = (await (await post(url, 'retention', { 'idempotency-key': 'day-old' })).json()) as any;
    assert.notEqual(past.taskId, first.taskId);
    assert.equal(past.repeated, undefined);
    await ended(past.taskId);
    assert.equal(asked('retention'), 2);
  });
});
