/**
 * Two users of one harness see nothing of each other's (issue 38 extends what the tokens file's
 * users were held to, to OpenID Connect's, of one tenant and of two): tasks and sub-tasks, a turn
 * under way and its queue, resumed streams, listings, commands, message ids, the model chosen in
 * a context, and push configs. Each file that authenticates users runs it with its own.
 */
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState, type ListTasksResponse, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { WHILE_BUSY_KEY } from '../../src/wire.js';
import type { HarnessConfigInput } from '../../src/config/schema.js';
import type { ModelServerScript } from '../fixtures/model-server.js';
import { collect, dataOf, send, sendStream, userMessage, type TestHarness, type TransportName } from './support.js';
import { poll } from '../support/wait.js';

/** The harness, and the headers two users authenticate with (alice's first). */
export interface TwoUsers {
  h: TestHarness;
  alice: Record<string, string>;
  bob: Record<string, string>;
}

/** The model the suite needs: a message holding "slowly" is answered at length, so its turn is under way a while. */
export const ISOLATION_SCRIPT: ModelServerScript = {
  reply: (body) =>
    JSON.stringify(body.messages.at(-1)).includes('slowly')
      ? Array.from({ length: 200 }, (_, i) => `w${i}`).join(' ')
      : 'Hello from the fixture model.',
  chunkDelayMs: 10,
};

/** Push configs may name the loopback address the suite's webhook is on. */
export const ISOLATION_CONFIG: HarnessConfigInput = { push: { allowPrivateNetworks: true } };

export const notFound = (error: any) =>
  /not found/i.test(String(error?.message)) || error?.name === 'TaskNotFoundError';

export function list(client: Client, contextId = ''): Promise<ListTasksResponse> {
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

/**
 * The isolation suite over `transport`, for the users `who` gives (read once the harness is up).
 * The harness's model answers a message holding "slowly" at length, and push configs may name
 * 127.0.0.1 (`push.allowPrivateNetworks`).
 */
export function describeUserIsolation(title: string, transport: TransportName, who: () => TwoUsers): void {
  describe(`${title}: per-user isolation over ${transport}`, () => {
    let h: TestHarness;
    let alice: Client;
    let bob: Client;
    let task: Task;
    let subtaskId: string;

    before(async () => {
      const users = who();
      h = users.h;
      alice = await h.client(transport, users.alice);
      bob = await h.client(transport, users.bob);
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

    it("a queued message (while-busy enqueue) to alice's running task, and a resumed stream of it, find nothing for bob", async () => {
      const stream = sendStream(alice, 'answer slowly');
      const first = await stream.next();
      const running = first.value as any;
      const id: string = running?.payload?.value?.id ?? running?.payload?.value?.taskId;
      const message = userMessage('Queue me behind her', { taskId: id });
      message.metadata = { [WHILE_BUSY_KEY]: 'enqueue' };
      await assert.rejects(
        collect(bob.sendMessageStream({ tenant: '', message, configuration: undefined, metadata: {} })),
        notFound,
      );
      await assert.rejects(collect(bob.resubscribeTask({ tenant: '', id })), notFound);
      await alice.cancelTask({ tenant: '', id, metadata: {} });
      await collect(stream);
    });

    it("push configs: bob can neither see, make nor delete those of alice's task", async () => {
      const own = await send(alice, 'A task with a webhook');
      const config = (id: string) => ({
        tenant: '',
        id,
        taskId: own.id,
        url: 'http://127.0.0.1:9/hook',
        token: 'hook-token',
        authentication: undefined,
      });
      await alice.createTaskPushNotificationConfig(config('mine'));
      await assert.rejects(bob.createTaskPushNotificationConfig(config('theirs')), notFound);
      await assert.rejects(bob.getTaskPushNotificationConfig({ tenant: '', taskId: own.id, id: 'mine' }), notFound);
      const listed = await bob
        .listTaskPushNotificationConfig({ tenant: '', taskId: own.id, pageSize: 0, pageToken: '' })
        .catch((error: unknown) => (notFound(error) ? { configs: [] } : Promise.reject(error)));
      assert.deepEqual(listed.configs, []);
      await bob.deleteTaskPushNotificationConfig({ tenant: '', taskId: own.id, id: 'mine' }).catch((error: unknown) => {
        if (!notFound(error)) throw error;
      });
      assert.equal((await alice.getTaskPushNotificationConfig({ tenant: '', taskId: own.id, id: 'mine' })).id, 'mine');
    });
  });
}
