/**
 * Push notifications end to end (issue 24): the four config operations on every transport, a
 * config belonging to its task's user, every event of a task POSTed in order to real receivers
 * on 127.0.0.1, retried while a receiver is down, never holding up a turn, kept as failed once
 * out of retries, and webhooks on private addresses refused unless allowed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@a2a-js/sdk/client';
import type { StreamResponse, Task, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { collect, send, startTestHarness, TRANSPORTS, userMessage, type TestHarness } from './support.js';
import { deduped, startReceiver, type Receiver, type Received } from './push-receiver.js';
import { poll } from '../support/wait.js';

const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdef00';
const as = (token: string) => ({ authorization: `Bearer ${token}` });

let h: TestHarness;
const receivers: Receiver[] = [];

async function receiver(mode?: 'ok' | 'down' | 'hang'): Promise<Receiver> {
  const r = await startReceiver(mode);
  receivers.push(r);
  return r;
}

before(async () => {
  h = await startTestHarness({
    script: { reply: 'one two three four five six', chunkDelayMs: 5 },
    config: { push: { allowPrivateNetworks: true, firstRetryMs: 20, maxRetryMs: 200 } },
    harness: {
      auth: {
        tokens: new Map([
          [ALICE, 'alice'],
          [BOB, 'bob'],
        ]),
      },
    },
  });
});

after(async () => {
  await h?.close();
  await Promise.all(receivers.map((r) => r.close()));
});

function config(taskId: string, url: string, id = ''): TaskPushNotificationConfig {
  return {
    tenant: '',
    id,
    taskId,
    url,
    token: 'the-token',
    authentication: { scheme: 'Bearer', credentials: 'receiver-secret' },
  };
}

/** A streamed turn whose `SendMessage` carries a push config; the events the stream gave. */
async function streamedTurn(client: Client, url: string, taskId = ''): Promise<StreamResponse[]> {
  return collect(
    client.sendMessageStream({
      tenant: '',
      message: userMessage('hello', { taskId }),
      configuration: {
        acceptedOutputModes: [],
        taskPushNotificationConfig: config('', url, 'from-send'),
        returnImmediately: false,
      },
      metadata: {},
    }),
  );
}

function taskIdOf(events: StreamResponse[]): string {
  const first = events[0]!.payload!;
  return first.$case === 'task' ? first.value.id : (first.value as { taskId: string }).taskId;
}

/** How many turn-ending statuses (any but working or submitted) the receiver has: one per turn. */
function turnsEnded(r: Receiver): number {
  return deduped(r.received).filter(
    (x) => x.kind === 'statusUpdate' && !/WORKING|SUBMITTED/.test(String(x.body.statusUpdate.status?.state)),
  ).length;
}

/** 1..n: every generation of a task whose last event was the n-th. */
function oneTo(received: readonly Received[]): number[] {
  const last = Math.max(...received.map((x) => x.generation));
  return Array.from({ length: last }, (_, i) => i + 1);
}

describe('issue 24: push-notification configs', () => {
  for (const transport of TRANSPORTS) {
    it(`issue 24: create, get, list and delete on ${transport}; deleting twice is no error`, async () => {
      const client = await h.client(transport, as(ALICE));
      const task = await send(client, 'a task to configure');
      const r = await receiver();
      const created = await client.createTaskPushNotificationConfig(config(task.id, r.url, 'cfg-1'));
      assert.equal(created.id, 'cfg-1');
      assert.equal(created.taskId, task.id);
      assert.equal(created.url, r.url);
      assert.equal(created.token, 'the-token');
      assert.deepEqual(created.authentication, { scheme: 'Bearer', credentials: 'receiver-secret' });
      const second = await client.createTaskPushNotificationConfig(config(task.id, r.url));
      assert.ok(second.id, 'an id is given when the request has none');
      const got = await client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-1' });
      assert.equal(got.url, r.url);
      const listed = await client.listTaskPushNotificationConfig({
        tenant: '',
        taskId: task.id,
        pageSize: 0,
        pageToken: '',
      });
      assert.deepEqual(listed.configs.map((c) => c.id).sort(), ['cfg-1', second.id].sort());
      await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-1' });
      await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-1' });
      const after = await client.listTaskPushNotificationConfig({
        tenant: '',
        taskId: task.id,
        pageSize: 0,
        pageToken: '',
      });
      assert.deepEqual(
        after.configs.map((c) => c.id),
        [second.id],
      );
      await assert.rejects(client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-1' }));
    });
  }

  it("issue 24: another user's configs cannot be seen, made or deleted", async () => {
    const alice = await h.client('JSONRPC', as(ALICE));
    const bob = await h.client('HTTP+JSON', as(BOB));
    const task = await send(alice, 'alice only');
    const r = await receiver();
    await alice.createTaskPushNotificationConfig(config(task.id, r.url, 'mine'));
    await assert.rejects(bob.createTaskPushNotificationConfig(config(task.id, r.url, 'theirs')), /not found/i);
    await assert.rejects(bob.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'mine' }), /not found/i);
    const listed = await bob.listTaskPushNotificationConfig({
      tenant: '',
      taskId: task.id,
      pageSize: 0,
      pageToken: '',
    });
    assert.deepEqual(listed.configs, []);
    await bob.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'mine' });
    const still = await alice.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'mine' });
    assert.equal(still.url, r.url);
  });

  it('issue 24: the card says pushNotifications', async () => {
    const card = await (await fetch(`${h.harness.url}/.well-known/agent-card.json`)).json();
    assert.equal(card.capabilities.pushNotifications, true);
  });
});

describe('issue 24: push delivery', () => {
  it("issue 24: a streamed turn's events are delivered in order, each once, with the token and credentials", async () => {
    const client = await h.client('JSONRPC', as(ALICE));
    const r = await receiver();
    const events = await streamedTurn(client, r.url);
    await poll('every event delivered', () => turnsEnded(r) === 1);
    assert.deepEqual(
      r.received.map((x) => x.generation),
      oneTo(r.received),
    );
    assert.equal(r.received[0]!.kind, 'task');
    assert.equal(r.received.at(-1)!.kind, 'statusUpdate');
    for (const x of r.received) {
      assert.equal(x.headers['content-type'], 'application/json'); // A2A 1.0 §4.3.3
      assert.equal(x.headers['x-a2a-notification-token'], 'the-token');
      assert.equal(x.headers.authorization, 'Bearer receiver-secret');
    }
    // The stream's events and the deliveries are the same events.
    const streamedKinds = events.map((e) => e.payload!.$case);
    assert.deepEqual(
      r.received.slice(-streamedKinds.length).map((x) => x.kind),
      streamedKinds,
    );
  });

  it('issue 24: a receiver down receives everything once it is back, in order', async () => {
    const client = await h.client('HTTP+JSON', as(ALICE));
    const r = await receiver('down');
    const events = await streamedTurn(client, r.url);
    const taskId = taskIdOf(events);
    await poll('a few refused attempts', () => r.arrived >= 3);
    // A second turn while it is down: its events queue behind the first's.
    await collect(
      client.sendMessageStream({
        tenant: '',
        message: userMessage('again', { taskId }),
        configuration: undefined,
        metadata: {},
      }),
    );
    r.mode = 'ok';
    await poll('every event delivered', () => turnsEnded(r) === 2);
    assert.deepEqual(
      deduped(r.received).map((x) => x.generation),
      oneTo(r.received),
    );
  });

  it('issue 24: a receiver that hangs does not delay the turn', async () => {
    const client = await h.client('JSONRPC', as(ALICE));
    const r = await receiver('hang');
    const events = await streamedTurn(client, r.url);
    // The turn's stream ended while the receiver still holds the first POST.
    await poll('the first POST, held by the receiver', () => r.arrived >= 1);
    assert.equal(r.received.length, 0, 'no POST was answered yet');
    assert.equal(events.at(-1)!.payload!.$case, 'statusUpdate');
    r.mode = 'ok';
    r.release();
    await poll('every event delivered', () => turnsEnded(r) === 1);
    assert.deepEqual(
      deduped(r.received).map((x) => x.generation),
      oneTo(r.received),
    );
  });
});

describe('issue 33: a push config on a command message', () => {
  for (const transport of TRANSPORTS)
    it(`issue 33 (${transport}): a command message's config is stored with the task the command made, which delivers every event of it, the command's reply first`, async () => {
      const client = await h.client(transport, as(ALICE));
      const r = await receiver();
      // The documented flow: a `/model` command with a config starts the task, then a question on it.
      const answer = await client.sendMessage({
        tenant: '',
        message: userMessage('/model large'),
        configuration: {
          acceptedOutputModes: [],
          taskPushNotificationConfig: config('', r.url, 'from-command'),
          returnImmediately: false,
        },
        metadata: {},
      });
      const task = answer as Task;
      assert.ok(task.id, 'the command made a task');
      const listed = await client.listTaskPushNotificationConfig({
        tenant: '',
        taskId: task.id,
        pageSize: 0,
        pageToken: '',
      });
      assert.deepEqual(
        listed.configs.map((c) => [c.id, c.url]),
        [['from-command', r.url]],
      );
      await poll('the reply delivered', () =>
        r.received.some((x) => x.body.statusUpdate?.metadata?.command === 'model'),
      );
      await collect(
        client.sendMessageStream({
          tenant: '',
          message: userMessage('and now a question', { taskId: task.id }),
          configuration: undefined,
          metadata: {},
        }),
      );
      // Two ends: the command's reply (the task waits for input) and the turn's.
      await poll("the turn's events delivered", () => turnsEnded(r) === 2);
      const got = deduped(r.received);
      assert.deepEqual(
        got.map((x) => x.generation),
        oneTo(r.received),
      );
      assert.equal(got[0]!.kind, 'task', "the task's creation first");
      assert.equal(got[1]!.kind, 'statusUpdate');
      assert.equal(got[1]!.body.statusUpdate.metadata.command, 'model', "then the command's reply");
    });

  it('issue 33: a command message naming a task stores its config with that task; a bad config refuses the command and stores nothing', async () => {
    const client = await h.client('JSONRPC', as(ALICE));
    const task = await send(client, 'a task first');
    const r = await receiver();
    const command = (taskPushNotificationConfig: TaskPushNotificationConfig) =>
      client.sendMessage({
        tenant: '',
        message: userMessage('/status', { taskId: task.id }),
        configuration: { acceptedOutputModes: [], taskPushNotificationConfig, returnImmediately: false },
        metadata: {},
      });
    await assert.rejects(command(config('', 'ftp://example.com/hook', 'bad')), /url must be an absolute http/);
    await assert.rejects(command(config('another-task', r.url, 'other')), /taskId must be empty or the task/);
    await command(config('', r.url, 'named'));
    const listed = await client.listTaskPushNotificationConfig({
      tenant: '',
      taskId: task.id,
      pageSize: 0,
      pageToken: '',
    });
    assert.deepEqual(
      listed.configs.map((c) => c.id),
      ['named'],
    );
    await poll('the reply delivered', () =>
      r.received.some((x) => x.body.statusUpdate?.metadata?.command === 'status'),
    );
  });
});

describe('issue 33: bounds on push configs, and their list in pages', () => {
  let bounded: TestHarness;
  const users = {
    JSONRPC: 'carol-token-0123456789abcdef',
    'HTTP+JSON': 'dave-token-0123456789abcdef0',
    GRPC: 'erin-token-0123456789abcdef0',
  };
  const FRANK = 'frank-token-0123456789abcdef';
  before(async () => {
    bounded = await startTestHarness({
      script: { reply: 'hi' },
      config: { push: { allowPrivateNetworks: true, maxConfigsPerTask: 3, maxConfigsPerUser: 5 } },
      harness: {
        auth: {
          tokens: new Map([...Object.values(users), FRANK].map((token) => [token, token.split('-')[0]!])),
        },
      },
    });
  });
  after(() => bounded?.close());

  for (const transport of TRANSPORTS)
    it(`issue 33 (${transport}): push.maxConfigsPerTask refuses a new config past it, not a replaced one; the URL and token are bounded; the list comes in pages`, async () => {
      const client = await bounded.client(transport, as(users[transport]));
      const task = await send(client, 'a task with configs');
      const url = 'http://127.0.0.1:9/hook';
      for (const id of ['a', 'b', 'c']) await client.createTaskPushNotificationConfig(config(task.id, url, id));
      await assert.rejects(
        client.createTaskPushNotificationConfig(config(task.id, url, 'd')),
        /has 3 push-notification configs.*push\.maxConfigsPerTask/,
      );
      const replaced = await client.createTaskPushNotificationConfig({ ...config(task.id, url, 'b'), token: 'new' });
      assert.equal(replaced.token, 'new', 'replacing one at the bound is no new config');
      await assert.rejects(
        client.createTaskPushNotificationConfig(config(task.id, `http://127.0.0.1:9/${'x'.repeat(2048)}`, 'long')),
        /url must be at most 2048 characters/,
      );
      await assert.rejects(
        client.createTaskPushNotificationConfig({ ...config(task.id, url, 'b'), token: 't'.repeat(513) }),
        /token must be at most 512 characters/,
      );
      // Pages of two: a, b, then c. Over HTTP+JSON the SDK's client sends no page: the query is asked directly.
      const page = async (pageSize: number, pageToken: string) => {
        if (transport !== 'HTTP+JSON')
          return client.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize, pageToken });
        const query = new URLSearchParams({ pageSize: String(pageSize), ...(pageToken ? { pageToken } : {}) });
        const response = await fetch(
          `${bounded.harness.url}/a2a/rest/tasks/${task.id}/pushNotificationConfigs?${query}`,
          { headers: { ...as(users[transport]), 'A2A-Version': '1.0' } },
        );
        const body = (await response.json()) as {
          configs?: Array<{ id: string }>;
          nextPageToken?: string;
          error?: unknown;
        };
        assert.equal(response.status, 200, JSON.stringify(body));
        return { configs: body.configs ?? [], nextPageToken: body.nextPageToken ?? '' };
      };
      const first = await page(2, '');
      assert.deepEqual(
        first.configs.map((c) => c.id),
        ['a', 'b'],
      );
      assert.ok(first.nextPageToken, 'a token for the next page');
      const second = await page(2, first.nextPageToken);
      assert.deepEqual(
        second.configs.map((c) => c.id),
        ['c'],
      );
      assert.equal(second.nextPageToken, '', 'no page after the last');
      assert.deepEqual(
        (await page(0, '')).configs.map((c) => c.id),
        ['a', 'b', 'c'],
        'pageSize 0: the default page, all three',
      );
      await assert.rejects(page(2, 'not-a-token'), /pageToken is not one this server gave|400/);
    });

  it('issue 33: push.maxConfigsPerUser counts every task of the user, and deleting one makes room', async () => {
    const client = await bounded.client('JSONRPC', as(FRANK));
    const url = 'http://127.0.0.1:9/hook';
    const tasks = [await send(client, 'one'), await send(client, 'two')];
    for (const id of ['a', 'b', 'c']) await client.createTaskPushNotificationConfig(config(tasks[0]!.id, url, id));
    for (const id of ['a', 'b']) await client.createTaskPushNotificationConfig(config(tasks[1]!.id, url, id));
    await assert.rejects(
      client.createTaskPushNotificationConfig(config(tasks[1]!.id, url, 'c')),
      /You have 5 push-notification configs.*push\.maxConfigsPerUser/,
    );
    // A SendMessage's config is held to the same bounds: the turn is refused before it runs.
    await assert.rejects(
      client.sendMessage({
        tenant: '',
        message: userMessage('a new task'),
        configuration: {
          acceptedOutputModes: [],
          taskPushNotificationConfig: config('', url, 'x'),
          returnImmediately: false,
        },
        metadata: {},
      }),
      /push\.maxConfigsPerUser/,
    );
    await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: tasks[0]!.id, id: 'a' });
    await client.createTaskPushNotificationConfig(config(tasks[1]!.id, url, 'c'));
  });
});

describe('issue 24: push safety and failures', () => {
  it('issue 24: a webhook on a private address is refused by default', async (t) => {
    const strict = await startTestHarness({ script: { reply: 'hi' } });
    t.after(() => strict.close());
    for (const transport of TRANSPORTS) {
      const client = await strict.client(transport);
      const task: Task = await send(client, 'hello');
      for (const url of [
        'http://127.0.0.1:9/hook',
        'http://[::1]:9/hook',
        'http://10.1.2.3/hook',
        'http://169.254.169.254/latest',
      ]) {
        await assert.rejects(
          client.createTaskPushNotificationConfig(config(task.id, url, 'private')),
          /not on a public address/,
          `${url} on ${transport}`,
        );
      }
      await assert.rejects(
        collect(
          client.sendMessageStream({
            tenant: '',
            message: userMessage('hello'),
            configuration: {
              acceptedOutputModes: [],
              taskPushNotificationConfig: config('', 'http://localhost:9/hook'),
              returnImmediately: false,
            },
            metadata: {},
          }),
        ),
        /not on a public address/,
      );
    }
  });

  it('issue 24: a delivery out of retries is kept as failed, and /status says so', async (t) => {
    const brief = await startTestHarness({
      script: { reply: 'hi' },
      config: { push: { allowPrivateNetworks: true, firstRetryMs: 5, maxRetryMs: 20, retryForMs: 100 } },
    });
    t.after(() => brief.close());
    const r = await receiver('down');
    const client = await brief.client('JSONRPC');
    const events = await streamedTurn(client, r.url);
    const taskId = taskIdOf(events);
    const status = async () => {
      const answer = await send(client, '/status', { taskId });
      return JSON.stringify(answer.status?.message ?? answer);
    };
    const text = await poll('the failures on /status', async () => {
      const said = await status();
      return /Push notifications failed: \d+/.test(said) && said;
    });
    assert.match(text, /out of retries/);
  });
});
