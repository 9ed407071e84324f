/**
 * `/approve always` (TOOL-5): the caller's later calls to that tool in that conversation run
 * without asking, in its other tasks too, after a restart, until `/permissions revoke`; another
 * tool, or another conversation, still asks. The harness restarts on the same data dir.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { toolCallsOf } from '../../src/wire.js';
import { needs } from '../needs.js';
import { POSTGRES, tempSchema } from '../support/postgres.js';
import { lastMessage } from '../fixtures/model-server.js';
import { STDIO_FIXTURE } from '../fixtures/mcp-server.js';
import { finalOf, pause, reply, statusMessages } from './approval-support.js';
import { collect, dataOf, send, sendStream, startTestHarness, textOf, type TestHarness } from './support.js';

/** "please echo X" calls fx_echo, "please fail" calls fx_fail: both need approval. */
function toolCalls(body: any) {
  const last = lastMessage(body);
  if (last.role !== 'user') return undefined;
  if (last.content.includes('please fail')) return [{ name: 'fx_fail', arguments: {} }];
  const echo = /please echo (\w+)/.exec(last.content);
  return echo ? [{ name: 'fx_echo', arguments: { text: echo[1] } }] : undefined;
}

const config = { mcpServers: { fx: { ...STDIO_FIXTURE, cwd: process.cwd(), approve: ['echo', 'fail'] } } };
let dataDir: string;
let h: TestHarness | undefined;

async function startHarness(): Promise<TestHarness> {
  h = await startTestHarness({ script: { toolCalls, reply }, config, dataDir });
  return h;
}

/** Sends a message on the task (or in the context) and asserts its turn ran the tool without asking. */
async function runsWithoutAsking(client: Client, text: string, ids: { taskId?: string; contextId?: string }) {
  const events = await collect(sendStream(client, text, ids));
  const final = finalOf(events);
  assert.equal(final.state, TaskState.TASK_STATE_INPUT_REQUIRED);
  assert.deepEqual(toolCallsOf(final.message.parts), [], `${text}: nothing waits for approval`);
  const calls = statusMessages(events).flatMap((m) => toolCallsOf(m?.parts));
  assert.ok(
    calls.some((c) => c.status === 'succeeded'),
    `${text}: the call ran`,
  );
  assert.ok(!calls.some((c) => c.status === 'awaiting-approval'), `${text}: and never asked`);
  return final;
}

before(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'tiny-harness-approve-always-'));
});

after(async () => {
  await h?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('/approve always (TOOL-5)', () => {
  it('TOOL-5 / CMD-33: /approve always runs the call, then that tool runs without asking in that conversation (its other tasks too, after a restart) until /permissions revoke; another tool or conversation still asks', async () => {
    let client = await (await startHarness()).client('JSONRPC');
    const paused = await pause(client, 'please echo one');
    const { taskId } = paused;
    const contextId = paused.final.message.contextId;

    const answer = await collect(sendStream(client, '/approve always', { taskId }));
    const replyMessage = statusMessages(answer).find((m) => m?.metadata?.command === 'approve');
    assert.deepEqual(dataOf(replyMessage).always, ['fx_echo']);
    assert.deepEqual(dataOf(replyMessage).calls, [
      { id: paused.waiting[0]!.id, tool: 'fx_echo', decision: 'approved' },
    ]);
    assert.match(textOf(replyMessage), /fx_echo runs without asking in this conversation/);
    assert.equal(textOf(finalOf(answer).message), 'tool said: echo: one', 'the waiting call ran');

    const again = await runsWithoutAsking(client, 'please echo two', { taskId });
    assert.equal(textOf(again.message), 'tool said: echo: two');

    const other = await pause(client, 'please fail', taskId);
    assert.deepEqual(
      other.waiting.map((c) => c.tool),
      ['fx_fail'],
      'another tool still asks',
    );
    await send(client, '/deny', { taskId });

    const elsewhere = await pause(client, 'please echo three');
    assert.notEqual(elsewhere.final.message.contextId, contextId);
    assert.deepEqual(
      elsewhere.waiting.map((c) => c.tool),
      ['fx_echo'],
      'another conversation still asks',
    );
    await send(client, '/deny', { taskId: elsewhere.taskId });

    await runsWithoutAsking(client, 'please echo four', { contextId });

    const listed = await send(client, '/permissions', { taskId });
    assert.deepEqual(
      (dataOf(listed.status?.message).allowed as { tool: string }[]).map((g) => g.tool),
      ['fx_echo'],
    );
    assert.match(textOf(listed.status?.message), /fx_echo/);
    const tools = textOf((await send(client, '/tools', { taskId })).status?.message);
    assert.match(tools, /^ {2}fx_echo \[asks; allowed in this conversation\] - Says the text back\.$/m);
    assert.match(tools, /^ {2}fx_fail \[asks\] - /m, '/tools marks the tools that ask');
    assert.match(tools, /^ {2}fx_throw - /m, 'and not those that do not');
    const elsewhereListed = await send(client, '/permissions', { taskId: elsewhere.taskId });
    assert.deepEqual(dataOf(elsewhereListed.status?.message).allowed, [], 'nothing is allowed in the other one');

    await h!.close();
    h = undefined;
    client = await (await startHarness()).client('HTTP+JSON');
    await runsWithoutAsking(client, 'please echo five', { taskId });

    const revoked = await send(client, '/permissions revoke fx_echo', { taskId });
    assert.equal(dataOf(revoked.status?.message).revoked, 'fx_echo');
    assert.deepEqual(dataOf(revoked.status?.message).allowed, []);
    const asks = await pause(client, 'please echo six', taskId);
    assert.deepEqual(
      asks.waiting.map((c) => c.tool),
      ['fx_echo'],
      'revoked, the tool asks again',
    );
    await send(client, '/deny', { taskId });

    const none = await send(client, '/permissions revoke fx_echo', { taskId });
    assert.match(textOf(none.status?.message), /fx_echo is not allowed for good in this conversation/);
    const bad = await send(client, '/permissions forget fx_echo', { taskId });
    assert.match(textOf(bad.status?.message), /Usage: \/permissions/);
  });

  it('CMD-33: /approve always with a call id approves that call and the waiting calls to the same tool; too many words are refused', async () => {
    const client = await (h ?? (await startHarness())).client('JSONRPC');
    const paused = await pause(client, 'please echo seven');
    const refused = await send(client, `/approve always ${paused.waiting[0]!.id} extra`, { taskId: paused.taskId });
    assert.match(textOf(refused.status?.message), /\/approve takes always and one call id/);
    const events = await collect(
      sendStream(client, `/approve always ${paused.waiting[0]!.id}`, { taskId: paused.taskId }),
    );
    assert.equal(textOf(finalOf(events).message), 'tool said: echo: seven');
    await runsWithoutAsking(client, 'please echo eight', { taskId: paused.taskId });
  });
});

describe('/approve always across instances on PostgreSQL (TOOL-5)', needs(POSTGRES), () => {
  it('TOOL-5: a call paused on one instance is answered always on another; the first then runs the tool without asking, until a revoke on the second', async (t) => {
    const schema = await tempSchema();
    const instances: TestHarness[] = [];
    t.after(async () => {
      await Promise.all(instances.map((instance) => instance.close()));
      await schema.drop();
    });
    for (let i = 0; i < 2; i += 1)
      instances.push(
        await startTestHarness({ script: { toolCalls, reply }, config, harness: { databaseUrl: schema.url } }),
      );
    const [a, b] = [await instances[0]!.client('JSONRPC'), await instances[1]!.client('JSONRPC')];
    const paused = await pause(a, 'please echo nine');
    const answer = await collect(sendStream(b, '/approve always', { taskId: paused.taskId }));
    assert.equal(textOf(finalOf(answer).message), 'tool said: echo: nine');
    await runsWithoutAsking(a, 'please echo ten', { taskId: paused.taskId });
    await send(b, '/permissions revoke fx_echo', { taskId: paused.taskId });
    const asks = await pause(a, 'please echo eleven', paused.taskId);
    assert.deepEqual(
      asks.waiting.map((c) => c.tool),
      ['fx_echo'],
    );
  });
});
