/**
 * Push notifications across instances on PostgreSQL (issue 24): the outbox is written with the
 * events, so when the instance delivering a task's notifications is killed (`kill -9`) another
 * instance takes its lease over and delivers the rest, in order.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { needs } from '../needs.js';
import { POSTGRES } from '../support/postgres.js';
import { poll } from '../support/wait.js';
import { startCluster, type Cluster } from './process.js';
import { collect, createClient, userMessage } from './support.js';
import { deduped, startReceiver, type Receiver } from './push-receiver.js';

let cluster: Cluster | undefined;
let receiver: Receiver | undefined;

after(async () => {
  await cluster?.close();
  await receiver?.close();
});

describe('issue 24: push notifications on several instances', needs(POSTGRES), () => {
  it('issue 24: kill -9 of the delivering instance: another one delivers every event, in order', async () => {
    cluster = await startCluster({
      names: ['a'],
      instanceLeaseMs: 1000,
      start: 'one by one',
      reply: 'one two three four five',
      holdAfterChunks: 100,
      config: { push: { allowPrivateNetworks: true, firstRetryMs: 20, maxRetryMs: 200 } },
    });
    receiver = await startReceiver('hang');
    const [a] = cluster.instances;
    const events = await collect(
      cluster.clients[0]!.sendMessageStream({
        tenant: '',
        message: userMessage('hello'),
        configuration: {
          acceptedOutputModes: [],
          taskPushNotificationConfig: {
            tenant: '',
            id: 'hook',
            taskId: '',
            url: receiver.url,
            token: 'the-token',
            authentication: undefined,
          },
          returnImmediately: false,
        },
        metadata: {},
      }),
    );
    assert.equal(events.at(-1)?.payload?.$case, 'statusUpdate');
    // Instance a delivers: the receiver holds its first POST.
    await poll('the first POST, held', () => receiver!.arrived >= 1);
    const b = await cluster.startInstance('b');
    await a!.stop('SIGKILL');
    receiver.mode = 'ok';
    await poll('every event delivered by b', () =>
      deduped(receiver!.received).some(
        (x) => x.kind === 'statusUpdate' && !/WORKING|SUBMITTED/.test(String(x.body.statusUpdate.status?.state)),
      ),
    );
    const generations = deduped(receiver.received).map((x) => x.generation);
    assert.deepEqual(
      generations,
      Array.from({ length: Math.max(...generations) }, (_, i) => i + 1),
    );
    assert.equal(receiver.received[0]!.kind, 'task');
    // b serves the task too: its configs are in the database.
    const client = await createClient(b.url, 'JSONRPC');
    const taskId = receiver.received[0]!.body.task.id;
    const listed = await client.listTaskPushNotificationConfig({ tenant: '', taskId, pageSize: 0, pageToken: '' });
    assert.deepEqual(
      listed.configs.map((c) => c.id),
      ['hook'],
    );
  });
});
