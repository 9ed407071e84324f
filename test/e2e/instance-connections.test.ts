/**
 * One instance on PostgreSQL under many commands at once. A command reply's state is chosen
 * under its task's row lock (CMD-9), and choosing it asks the coordination whether a turn holds
 * the task: a query made while the store's transaction holds a pooled connection. Were that
 * query to need a second connection of the same pool, as many commands at once as the pool has
 * connections would each hold one and wait for another forever, and the instance would answer
 * nothing again (bench/postgres-vs-sqlite.ts found it at 16 clients). The instance runs in a
 * process of its own, as `serve --database` does, so that the requests reach it together.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { needs } from '../needs.js';
import { POSTGRES, tempSchema, type TempSchema } from '../support/postgres.js';
import { startServerProcess, type ServerProcess } from './process.js';
import { createClient, send, textOf } from './support.js';

/** Several times pg's default pool of 10 connections. */
const AT_ONCE = 40;

describe('one instance on PostgreSQL, many commands at once', needs(POSTGRES), () => {
  let schema: TempSchema;
  let dir: string;
  let instance: ServerProcess;
  let clients: Client[];

  before(async () => {
    schema = await tempSchema();
    dir = mkdtempSync(join(tmpdir(), 'tiny-harness-connections-'));
    instance = await startServerProcess(['--database', schema.url, '--data-dir', dir]);
    // A client each, as separate users' programs would have.
    clients = await Promise.all(Array.from({ length: AT_ONCE }, () => createClient(instance.url, 'JSONRPC')));
  });

  after(async () => {
    await instance?.stop('SIGTERM');
    await schema?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(`CMD-9: ${AT_ONCE} commands at once, each on its own task, are all answered (the lease check under the row lock takes no connection the store's transactions hold)`, async () => {
    const tasks: Task[] = [];
    for (const client of clients) tasks.push(await send(client, '/status'));
    const answers = await Promise.all(tasks.map((task, i) => send(clients[i]!, '/status', { taskId: task.id })));
    for (const [i, answer] of answers.entries()) {
      assert.equal(answer.id, tasks[i]!.id);
      assert.equal(answer.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      assert.match(textOf(answer.status?.message), /State: /);
    }
  });
});
