/**
 * The HTTP+JSON binding of our own (src/server/rest-binding.ts, issue 36): its routes as the
 * SDK's express router matched them (each also under a tenant's segment, a subscribe path before
 * `/tasks/{id}`, path segments percent-decoded), and the call each request becomes.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { A2A_PROTOCOL_VERSION, A2A_VERSION_HEADER, TaskState, type Task } from '@a2a-js/sdk';
import { UnauthenticatedUser } from '@a2a-js/sdk/server';
import type { Call } from '../../src/a2a/index.js';
import { readJsonBody } from '../../src/server/http-body.js';
import { matchRestRoute, restBinding } from '../../src/server/rest-binding.js';

describe('the HTTP+JSON routes (issue 36)', () => {
  it('match with or without a tenant segment, subscribe before the task itself', () => {
    assert.deepEqual(matchRestRoute('GET', '/tasks/t1'), {
      name: 'getTask',
      params: { taskId: 't1', tenant: undefined },
    });
    assert.deepEqual(matchRestRoute('GET', '/acme/tasks/t1'), {
      name: 'getTask',
      params: { taskId: 't1', tenant: 'acme' },
    });
    assert.equal(matchRestRoute('GET', '/tasks/t1:subscribe')?.name, 'subscribe');
    assert.equal(matchRestRoute('POST', '/acme/tasks/t1:subscribe')?.name, 'subscribe');
    assert.equal(matchRestRoute('POST', '/tasks/t1:cancel')?.name, 'cancel');
    assert.equal(matchRestRoute('POST', '/acme/message:send')?.name, 'send');
    assert.equal(matchRestRoute('HEAD', '/tasks')?.name, 'listTasks');
    assert.equal(matchRestRoute('GET', '/tasks/')?.name, 'listTasks', 'a trailing slash is the same path');
    assert.deepEqual(matchRestRoute('DELETE', '/tasks/t1/pushNotificationConfigs/c%201')?.params.configId, 'c 1');
    assert.equal(matchRestRoute('POST', '/tasks/t1'), undefined, 'no such verb on the path');
    assert.equal(matchRestRoute('GET', '/a/b/tasks/t1'), undefined);
  });

  it('refuse a path segment that is not valid percent-encoding', () => {
    assert.throws(() => matchRestRoute('GET', '/tasks/%ff'), /percent-encoding/);
  });
});

describe('an HTTP+JSON request becomes one call of the path (issue 36)', () => {
  const calls: Call[] = [];
  let server: Server;
  let base: string;
  const task: Task = {
    id: 't1',
    contextId: 'c1',
    status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: undefined },
    artifacts: [],
    history: [],
    metadata: {},
  };

  before(async () => {
    const binding = restBinding({
      path: { run: ((call: Call) => (calls.push(call), Promise.resolve(task))) as never },
      card: async () => ({}) as never,
      onInternal: () => {},
    });
    server = createServer((req, res) => {
      const [path, search = ''] = req.url!.split('?');
      void readJsonBody(req, 1024).then(async () => {
        if (!(await binding(req, res, new UnauthenticatedUser(), path!, search))) res.writeHead(404).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => {
    server.closeAllConnections();
    server.close();
  });

  it("carries the path's tenant, the query's history length, and the A2A-Version asked for", async () => {
    const response = await fetch(`${base}/acme/tasks/t1?historyLength=2&tenant=other`, {
      headers: { [A2A_VERSION_HEADER]: A2A_PROTOCOL_VERSION, 'last-event-id': '7' },
    });
    assert.equal(response.status, 200);
    // A2A 1.0 §11.1: the HTTP+JSON binding answers application/json (as the TCK's HTTP_JSON-SVC-001 checks).
    assert.match(response.headers.get('content-type')!, /^application\/json/);
    assert.deepEqual(await response.json(), {
      id: 't1',
      contextId: 'c1',
      status: { state: 'TASK_STATE_COMPLETED' },
      metadata: {},
    });
    const call = calls.at(-1)!;
    assert.equal(call.method, 'getTask');
    assert.deepEqual(call.params, { id: 't1', tenant: 'acme', historyLength: 2 });
    assert.equal(call.context.tenant, 'acme');
    assert.equal(call.context.requestedVersion, A2A_PROTOCOL_VERSION);
    assert.equal(call.context.state.get('tiny-harness/last-event-id'), '7');
  });

  it('refuses a call without the version header before it reaches the path', async () => {
    const before = calls.length;
    const response = await fetch(`${base}/tasks/t1`);
    assert.equal(response.status, 400);
    assert.equal(((await response.json()) as { error: { status: string } }).error.status, 'FAILED_PRECONDITION');
    assert.equal(calls.length, before);
  });

  it('leaves a path it has no route for to the app (the JSON 404)', async () => {
    assert.equal((await fetch(`${base}/nosuch`)).status, 404);
  });
});
