/**
 * A tool call's question to the user answered on another instance (issue 39, TOOL-5), on one
 * PostgreSQL database: instance A runs the turn whose call asks; the answer sent to instance B
 * is recorded in the task's log, where A's waiting call reads it, and the turn resumes on A.
 * An answer recorded while the asking instance lies dead (killed, its lease not yet swept) is not
 * lost: once the lease is taken over, the call is closed as failed and a turn tells the model.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { needs } from '../needs.js';
import { POSTGRES } from '../support/postgres.js';
import { startMcpHttpServer, type RunningMcpHttpServer } from '../fixtures/mcp-server.js';
import { startCluster, type Cluster } from './process.js';
import { answer, ask, endOf, reply, toolCalls } from './elicitation-support.js';
import { createClient, textOf } from './support.js';
import { ELICITATION_ANSWER_NOTICE } from '../../src/elicitations.js';
import { NOTICE_KEY, toolCallsOf } from '../../src/wire.js';

let cluster: Cluster;
let web: RunningMcpHttpServer;
let a: Client;
let b: Client;

describe('a question answered on another instance (issue 39, TOOL-5)', needs(POSTGRES), () => {
  before(async () => {
    web = await startMcpHttpServer();
    cluster = await startCluster({
      start: 'together',
      names: ['instance-a', 'instance-b'],
      reply,
      toolCalls,
      holdAfterChunks: 0,
      config: { mcpServers: { fxh: { url: web.url } } },
    });
    [a, b] = cluster.clients as [Client, Client];
  });

  after(async () => {
    await cluster?.close();
    await web?.close();
  });

  it('issue 39 / TOOL-5: a form asked on instance A, answered on instance B: the call on A gets the answer and the turn resumes', async () => {
    const asked = await ask(a, 'please ask on fxh');
    assert.equal(asked.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const seenOnB = await b.getTask({ tenant: '', id: asked.taskId, historyLength: undefined });
    assert.equal(seenOnB.status?.message?.messageId, asked.message.messageId, 'B shows the same question');
    await assert.rejects(
      answer(b, asked.taskId, { elicitation: asked.question.id, action: 'accept', content: {} }),
      /does not fit the question/,
      'B refuses an answer that does not fit, as A would',
    );
    const events = await answer(b, asked.taskId, {
      elicitation: asked.question.id,
      action: 'accept',
      content: { name: 'Ada' },
    });
    assert.equal(textOf(endOf(events).message), 'tool said: answered accept {"name":"Ada"}');
  });

  it('issue 39 / TOOL-5: an answer given on B while the instance that asked lies killed (kill -9) is not lost: the call fails clearly and the model is told, with the answer', async () => {
    const doomed = await cluster.startInstance('instance-doomed');
    try {
      const asked = await ask(await createClient(doomed.url, 'JSONRPC'), 'please ask on fxh');
      await doomed.stop('SIGKILL');
      const events = await answer(b, asked.taskId, {
        elicitation: asked.question.id,
        action: 'accept',
        content: { name: 'Ada' },
      });
      const recorded = events.map((e) => (e.payload?.value as any)?.status?.message).find(Boolean);
      assert.equal(
        recorded?.metadata?.[NOTICE_KEY],
        ELICITATION_ANSWER_NOTICE,
        'the answer was recorded for the turn that asked, its instance dead but its lease held',
      );
      const told = cluster.model.requests.at(-1)!.body.messages.at(-1).content as string;
      assert.match(told, /The user accepted with \{"name":"Ada"\}/, 'the model is told the answer');
      assert.match(told, /could not go on, so the call failed/);
      assert.match(textOf(endOf(events).message), /^plain answer to \[The tool call fxh_ask/);
      const task = await a.getTask({ tenant: '', id: asked.taskId, historyLength: undefined });
      // Each call's newest report wins.
      const calls = new Map(toolCallsOf(task.history.flatMap((m) => m.parts)).map((c) => [c.id, c.status]));
      assert.ok(![...calls.values()].includes('running'), 'no call shows as running');
    } finally {
      await doomed.stop('SIGKILL');
    }
  });
});
