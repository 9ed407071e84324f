/**
 * Bearer-token authentication end to end: refused without a valid token on every transport,
 * the card and page public, and each user seeing only their own tasks (sub-tasks included).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import {
  collect,
  createClient,
  dataOf,
  send,
  startTestHarness,
  TRANSPORTS,
  type TestHarness,
  sendStream,
} from './support.js';
import { poll } from '../support/wait.js';

const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdef00';
const WRONG = 'nobody-token-0123456789abcdef';
const as = (token: string) => ({ authorization: `Bearer ${token}` });

let h: TestHarness;

before(async () => {
  h = await startTestHarness({
    script: {
      reply: (body) =>
        JSON.stringify(body.messages.at(-1)).includes('slowly')
          ? Array.from({ length: 200 }, (_, i) => `w${i}`).join(' ')
          : 'Hello from the fixture model.',
      chunkDelayMs: 10,
    },
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
});

const notFound = (error: any) => /not found/i.test(String(error?.message)) || error?.name === 'TaskNotFoundError';
const refused = (error: any) =>
  /401|unauthenticated|authentication required/i.test(`${error?.message} ${error?.code} ${error?.name}`);

function list(client: Client, contextId = '') {
  return client.listTasks({
    tenant: '',
    contextId,
    status: TaskState.TASK_STATE_UNSPECIFIED,
    pageSize: 100,
    pageToken: '',
    historyLength: 0,
    statusTimestampAfter: undefined,
    includeArtifacts: false,
  });
}

async function ended(client: Client, id: string): Promise<Task> {
  return poll(`the end of task ${id}`, async () => {
    const task = await client.getTask({ tenant: '', id, historyLength: 0 });
    return [TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED].includes(task.status!.state)
      ? task
      : undefined;
  });
}

describe('the public parts', () => {
  it('the card is served without a token and declares the bearer scheme', async () => {
    const response = await fetch(`${h.harness.url}/.well-known/agent-card.json`);
    assert.equal(response.status, 200);
    const card = await response.json();
    assert.deepEqual(card.securitySchemes, {
      bearer: {
        httpAuthSecurityScheme: {
          scheme: 'Bearer',
          description: card.securitySchemes.bearer.httpAuthSecurityScheme.description,
        },
      },
    });
    assert.equal(card.securitySchemes.bearer.httpAuthSecurityScheme.scheme, 'Bearer');
    assert.deepEqual(card.securityRequirements, [{ schemes: { bearer: { list: [] } } }]);
  });

  it('the web page is served without a token', async () => {
    const response = await fetch(`${h.harness.url}/`);
    assert.equal(response.status, 200);
  });
});

describe('refused without a valid token', () => {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'SendMessage',
    params: { message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: '/model' }] } },
  });

  for (const [label, headers] of [
    ['no token', {}],
    ['a wrong token', as(WRONG)],
    ['another scheme', { authorization: `Basic ${ALICE}` }],
  ] as const) {
    it(`JSON-RPC with ${label}: 401, WWW-Authenticate: Bearer, a JSON-RPC error`, async () => {
      const response = await fetch(`${h.harness.url}/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...headers },
        body,
      });
      assert.equal(response.status, 401);
      assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer\b/);
      const json = await response.json();
      assert.equal(json.jsonrpc, '2.0');
      assert.equal(typeof json.error.code, 'number');
      assert.match(json.error.message, /Authorization: Bearer/);
      assert.doesNotMatch(JSON.stringify(json), /stack|at .*\.js/);
    });

    it(`HTTP+JSON with ${label}: 401 JSON`, async () => {
      const response = await fetch(`${h.harness.url}/a2a/rest/tasks/some-task`, {
        headers: { 'a2a-version': '1.0', ...headers },
      });
      assert.equal(response.status, 401);
      assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer\b/);
      assert.equal((await response.json()).error.status, 'UNAUTHENTICATED');
    });
  }

  for (const transport of TRANSPORTS) {
    it(`the SDK client over ${transport}, with no token and with a wrong one`, async () => {
      for (const headers of [undefined, as(WRONG)]) {
        const client = await createClient(h.harness.url, transport, headers);
        await assert.rejects(send(client, '/model'), refused);
        await assert.rejects(list(client), refused);
        await assert.rejects(collect(sendStream(client, 'hi')), refused);
      }
    });
  }

  it('gRPC answers UNAUTHENTICATED (code 16), unary and streaming', async () => {
    const client = await createClient(h.harness.url, 'GRPC', as(WRONG));
    await assert.rejects(send(client, 'hi'), (error: any) =>
      /UNAUTHENTICATED|\b16\b/.test(`${error?.code} ${error?.message} ${error?.cause?.code}`),
    );
    await assert.rejects(collect(client.resubscribeTask({ tenant: '', id: 'x' })), (error: any) =>
      /UNAUTHENTICATED|\b16\b/.test(`${error?.code} ${error?.message} ${error?.cause?.code}`),
    );
  });
});

for (const transport of TRANSPORTS) {
  describe(`per-user isolation over ${transport}`, () => {
    let alice: Client;
    let bob: Client;
    let task: Task;
    let subtaskId: string;

    before(async () => {
      alice = await h.client(transport, as(ALICE));
      bob = await h.client(transport, as(BOB));
      task = await send(alice, 'Hello, I am Alice.');
      const spawned = await send(alice, '/spawn say hello', { taskId: task.id });
      subtaskId = spawned.status!.message!.metadata?.task_ref as string;
      assert.match(subtaskId, /^[0-9a-f-]{36}$/);
      await ended(alice, subtaskId);
    });

    it('the owner reads, lists and commands her tasks', async () => {
      assert.equal((await alice.getTask({ tenant: '', id: task.id, historyLength: 0 })).id, task.id);
      const ids = (await list(alice, task.contextId)).tasks.map((t) => t.id);
      assert.ok(ids.includes(task.id) && ids.includes(subtaskId), 'alice lists her task and her sub-task');
      const status = await send(alice, '/status', { taskId: task.id });
      assert.equal(status.id, task.id);
    });

    for (const [which, id] of [
      ['task', () => task.id],
      ['sub-task', () => subtaskId],
    ] as const) {
      it(`another user finds neither alice's ${which} nor a trace of it`, async () => {
        await assert.rejects(bob.getTask({ tenant: '', id: id(), historyLength: 0 }), notFound);
        await assert.rejects(send(bob, 'Hijack', { taskId: id() }), notFound);
        await assert.rejects(send(bob, '/status', { taskId: id() }), notFound);
        await assert.rejects(send(bob, '/model builtin:echo', { taskId: id() }), notFound);
        await assert.rejects(send(bob, '/spawn steal', { taskId: id() }), notFound);
        await assert.rejects(collect(bob.resubscribeTask({ tenant: '', id: id() })), notFound);
        await assert.rejects(bob.cancelTask({ tenant: '', id: id(), metadata: {} }), notFound);
      });
    }

    it("while alice's turn runs, bob's message to her task reads as not found (not as busy)", async () => {
      const stream = sendStream(alice, 'answer slowly');
      const first = await stream.next();
      const running = first.value as any;
      const id: string = running?.payload?.value?.id ?? running?.payload?.value?.taskId;
      assert.ok(id, 'the stream names its task');
      await assert.rejects(
        send(bob, 'Let me in', { taskId: id }),
        (error: any) => notFound(error) && !/still being written/.test(error.message),
      );
      await assert.rejects(collect(sendStream(bob, 'Let me in', { taskId: id })), notFound);
      await alice.cancelTask({ tenant: '', id, metadata: {} });
      await collect(stream);
    });

    it("ListTasks shows bob none of alice's tasks", async () => {
      const own = await send(bob, 'Hello, I am Bob.');
      const ids = (await list(bob)).tasks.map((t) => t.id);
      assert.ok(ids.includes(own.id));
      assert.ok(!ids.includes(task.id) && !ids.includes(subtaskId));
      assert.equal((await list(bob, task.contextId)).tasks.length, 0);
    });

    it("alice's tasks are unchanged by bob's attempts", async () => {
      const stored = await alice.getTask({ tenant: '', id: task.id, historyLength: undefined });
      assert.equal(stored.status!.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      assert.ok(!JSON.stringify(stored.history).includes('Hijack'));
      assert.ok(!JSON.stringify(stored.history).includes('steal'));
    });

    it("CMD-34: message ids are each user's own: bob's message with alice's id is his, not a resend of hers", async () => {
      const messageId = crypto.randomUUID();
      const hers = await send(alice, 'Hello, Alice here', { messageId });
      const his = await send(bob, 'Hello, Bob here', { messageId });
      assert.notEqual(his.id, hers.id);
      await assert.rejects(alice.getTask({ tenant: '', id: his.id, historyLength: 0 }), notFound);
      assert.equal((await send(alice, 'Hello, Alice here', { messageId })).id, hers.id, 'her resend is still hers');
    });

    // Last: bob ends up with tasks in alice's context id, which the listing test above rules out.
    it("CMD-35: the model chosen in a context is its user's: bob, naming alice's context, neither sees nor changes it", async () => {
      const contextId = task.contextId;
      await send(alice, '/model fixture:large', { taskId: task.id });
      const bobs = await send(bob, '/model', { contextId });
      assert.notEqual(bobs.id, task.id);
      assert.equal(
        dataOf(bobs.status?.message).current,
        'fixture:small',
        "bob's new task there starts with the default, not alice's choice",
      );
      await send(bob, '/model builtin:echo', { contextId });
      const next = await send(alice, 'A new task in my context', { contextId });
      assert.equal(h.chatRequests().at(-1).model, 'large', "alice's next task runs on her choice");
      const status = await send(alice, '/status', { taskId: next.id });
      assert.equal(dataOf(status.status?.message).model, 'fixture:large');
      const bobsNext = await send(bob, '/model', { contextId });
      assert.equal(dataOf(bobsNext.status?.message).current, 'builtin:echo', "bob's choice stays his");
    });
  });
}
