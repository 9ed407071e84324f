/**
 * The conversation commands across instances on one PostgreSQL database (CMD-36, CMD-37):
 * `/compact` on one instance while another runs the task's turn is refused; a `/rewind` on one
 * instance is what the next turn on another sends its model; a fork made on one runs on
 * another; and instances started afresh keep every compaction point and rewind.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { needs } from '../needs.js';
import { POSTGRES } from '../support/postgres.js';
import { startCluster, type Cluster } from './process.js';
import { createClient, dataOf, send, textOf } from './support.js';
import { COMPACTION_KEY, REPLY_ERROR_KEY, REWIND_KEY } from '../../src/wire.js';
import { SUMMARY_HEADING } from '../../src/conversation/build.js';
import { SUMMARISER_ROLE } from '../../src/conversation/compaction.js';

const REPLY = 'noted';
const SUMMARY = 'SUMMARY-OF-EARLIER';

let cluster: Cluster;
let a: Client;
let b: Client;

/** What the model was sent in its last request whose prompt holds `marker`. */
function lastRequestWith(marker: string): string {
  const request = cluster.model.requests.findLast((r) => JSON.stringify(r.body?.messages ?? []).includes(marker));
  assert.ok(request, `the model got a request holding ${marker}`);
  return JSON.stringify(request.body.messages);
}

async function get(client: Client, id: string): Promise<Task> {
  return client.getTask({ tenant: '', id, historyLength: undefined });
}

/** A conversation of `turns` exchanges on `client`, each message numbered after `label`. */
async function conversation(client: Client, label: string, turns: number): Promise<Task> {
  let task = await send(client, `${label} 1`);
  for (let n = 2; n <= turns; n += 1) task = await send(client, `${label} ${n}`, { taskId: task.id });
  return task;
}

describe('the conversation commands across instances (CMD-36, CMD-37)', needs(POSTGRES), () => {
  before(async () => {
    cluster = await startCluster({
      start: 'together',
      names: ['instance-a', 'instance-b'],
      // A summary request is told apart by its instructions' first words; every other request gets the reply.
      reply: (body: any) => (String(body?.messages?.[0]?.content ?? '').startsWith(SUMMARISER_ROLE) ? SUMMARY : REPLY),
      holdAfterChunks: 0,
      config: { compact: { auto: false }, instructions: [] },
    });
    [a, b] = cluster.clients as [Client, Client];
  });

  after(async () => {
    await cluster?.close();
  });

  it('CMD-36: /compact on B while A runs the turn is refused, and compacts nothing', async () => {
    const task = await conversation(a, 'refused', 3);
    const held = await cluster.heldTurn(a, { taskId: task.id });
    try {
      const answer = await send(b, '/compact', { taskId: task.id });
      assert.equal(dataOf(answer.status?.message)?.[REPLY_ERROR_KEY], 'turn_running', textOf(answer.status?.message));
      assert.equal(answer.status?.state, TaskState.TASK_STATE_WORKING, 'the reply leaves the state as it is (CMD-9)');
    } finally {
      held.release();
      for await (const _ of held.stream);
    }
    const stored = await get(b, task.id);
    assert.equal(stored.history.filter((m) => m.metadata?.[COMPACTION_KEY]).length, 0);
  });

  it('CMD-37: /rewind on B, then a turn on A sends the rewound conversation', async () => {
    const task = await conversation(a, 'rewound', 4);
    const answer = await send(b, '/rewind 2', { taskId: task.id });
    assert.equal(dataOf(answer.status?.message)?.rewoundTo?.text, 'rewound 3', textOf(answer.status?.message));
    await send(a, 'after the rewind', { taskId: task.id });
    const sent = lastRequestWith('after the rewind');
    assert.match(sent, /rewound 2/);
    assert.doesNotMatch(sent, /rewound 3|rewound 4/, 'the hidden messages do not reach the model');
    const seen = await get(a, task.id);
    assert.ok(!seen.history.some((m) => /^rewound [34]$/.test(textOf(m))), 'nor GetTask on either instance');
  });

  it('CMD-37: a fork made on A runs on B, and neither conversation sees the other afterwards', async () => {
    const task = await conversation(a, 'forked', 2);
    const answer = await send(a, '/fork', { taskId: task.id });
    const forkId = dataOf(answer.status?.message)?.taskId as string;
    assert.ok(forkId && forkId !== task.id, textOf(answer.status?.message));
    await send(b, 'in the fork', { taskId: forkId });
    const sent = lastRequestWith('in the fork');
    assert.match(sent, /forked 1/);
    assert.match(sent, /forked 2/);
    await send(b, 'in the source', { taskId: task.id });
    assert.doesNotMatch(lastRequestWith('in the source'), /in the fork/);
    await send(a, 'the fork again', { taskId: forkId });
    assert.doesNotMatch(lastRequestWith('the fork again'), /in the source/);
  });

  it('CMD-36, CMD-37: instances started afresh keep every compaction point and rewind', async () => {
    const task = await conversation(a, 'kept', 6);
    const compacted = await send(b, '/compact', { taskId: task.id });
    assert.ok(dataOf(compacted.status?.message)?.compaction, textOf(compacted.status?.message));
    await send(a, 'kept 7', { taskId: task.id });
    await send(a, 'kept 8', { taskId: task.id });
    await send(b, '/rewind 1', { taskId: task.id });
    // Every instance stops; a new one on the same database answers.
    await Promise.all(cluster.instances.map((instance) => instance.stop('SIGTERM')));
    const fresh = await cluster.startInstance('instance-c');
    const client = await createClient(fresh.url, 'JSONRPC');
    const stored = await get(client, task.id);
    assert.equal(stored.history.filter((m) => m.metadata?.[COMPACTION_KEY]).length, 1, 'the compaction point');
    assert.equal(stored.history.filter((m) => m.metadata?.[REWIND_KEY]).length, 1, 'the rewind mark');
    assert.ok(!stored.history.some((m) => textOf(m) === 'kept 8'), 'the rewound message stays hidden');
    await send(client, 'after the restart', { taskId: task.id });
    const sent = lastRequestWith('after the restart');
    assert.ok(sent.includes(SUMMARY_HEADING.slice(0, 30)) && sent.includes(SUMMARY), 'the summary is sent');
    assert.match(sent, /kept 7/);
    assert.doesNotMatch(sent, /kept 8/);
  });
});
