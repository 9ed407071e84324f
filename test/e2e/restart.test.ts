import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { startModelServer, type RunningModelServer } from '../fixtures/model-server.js';
import { startServerProcess, writeFixtureConfig, type ServerProcess } from './process.js';
import { createClient, dataOf, send, textOf, sendStream } from './support.js';
import { poll } from '../support/wait.js';

let model: RunningModelServer;
let dir: string;
let configFile: string;
const running: ServerProcess[] = [];

async function start(): Promise<ServerProcess> {
  const server = await startServerProcess(['--data-dir', join(dir, 'data'), '--config', configFile]);
  running.push(server);
  return server;
}

before(async () => {
  model = await startModelServer({
    reply: (body) =>
      JSON.stringify(body.messages).includes('long story')
        ? Array.from({ length: 200 }, (_, i) => `w${i}`).join(' ')
        : `answer from ${body.model}`,
    chunkDelayMs: 20,
  });
  dir = mkdtempSync(join(tmpdir(), 'tiny-harness-restart-'));
  configFile = writeFixtureConfig(dir, model.baseURL);
});

after(async () => {
  await Promise.all(running.map((server) => server.stop('SIGKILL')));
  await model?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a restart on the same data dir', () => {
  it('CMD-21: keeps every task with its history, artifacts, model and usage', async () => {
    const first = await start();
    const client = await createClient(first.url, 'JSONRPC');
    const task = await send(client, 'Hello');
    await send(client, '/model fixture:large', { taskId: task.id });
    await send(client, 'Again', { taskId: task.id });
    const before = await client.getTask({ tenant: '', id: task.id, historyLength: undefined });
    assert.equal(await first.stop('SIGTERM'), 0, 'a clean shutdown exits 0');

    const second = await start();
    const again = await createClient(second.url, 'HTTP+JSON');
    const after = await again.getTask({ tenant: '', id: task.id, historyLength: undefined });
    assert.deepEqual(
      after.history.map((m) => m.messageId),
      before.history.map((m) => m.messageId),
    );
    assert.deepEqual(after.artifacts, before.artifacts);
    assert.equal(after.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const status = await send(again, '/status', { taskId: task.id });
    const report = dataOf(status.status?.message);
    assert.equal(report.model, 'fixture:large');
    assert.deepEqual(
      report.usage.map((u: any) => u.model),
      ['fixture:small', 'fixture:large'],
    );
    await send(again, 'Third', { taskId: task.id });
    assert.equal(model.requests.filter((r) => r.path.endsWith('/chat/completions')).at(-1)!.body.model, 'large');
    await second.stop('SIGTERM');
  });

  it('CMD-30: a sub-task and its links survive a restart', async () => {
    const first = await start();
    const client = await createClient(first.url, 'GRPC');
    const parent = await send(client, 'Parent task');
    const ref = (await send(client, '/spawn note the date', { taskId: parent.id })).status!.message!.metadata!
      .task_ref as string;
    await poll(
      'the sub-task completed',
      async () =>
        (await client.getTask({ tenant: '', id: ref, historyLength: 0 })).status?.state ===
        TaskState.TASK_STATE_COMPLETED,
    );
    const before = await client.getTask({ tenant: '', id: ref, historyLength: undefined });
    await first.stop('SIGTERM');

    const second = await start();
    const again = await createClient(second.url, 'JSONRPC');
    const after = await again.getTask({ tenant: '', id: ref, historyLength: undefined });
    assert.equal(after.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.deepEqual(after.metadata?.['tiny-harness/subtasks'], { parent: parent.id });
    assert.deepEqual(after.artifacts, before.artifacts);
    const status = await send(again, '/status', { taskId: parent.id });
    assert.deepEqual(dataOf(status.status?.message).subtasks, [{ id: ref, state: 'TASK_STATE_COMPLETED' }]);
    await second.stop('SIGTERM');
  });

  it('a turn cut short by a crash is set back to input-required with a message saying so', async () => {
    const first = await start();
    const client = await createClient(first.url, 'JSONRPC');
    const stream = sendStream(client, 'tell me a long story');
    const opening = await stream.next();
    const taskId = (opening.value as any).payload.value.id;
    for (let i = 0; i < 3; i++) await stream.next();
    await first.stop('SIGKILL');
    await stream.return(undefined).catch(() => {});

    const second = await start();
    const again = await createClient(second.url, 'JSONRPC');
    const task = await again.getTask({ tenant: '', id: taskId, historyLength: undefined });
    assert.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.match(textOf(task.status?.message), /interrupted/);
    const next = await send(again, 'go on', { taskId });
    assert.equal(next.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    await second.stop('SIGTERM');
  });
});
