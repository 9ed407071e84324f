/**
 * Tool calls that ask the user (MCP elicitation, issue 39; TOOL-5), end to end on one instance:
 * the fixture MCP server over stdio (`fx`) and Streamable HTTP (`fxh`) asks a form or a link,
 * the turn pauses, and the answer given as a data part (or "done") resumes it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState } from '@a2a-js/sdk';
import { ELICITATION_ENDED_NOTICE } from '../../src/elicitations.js';
import { NOTICE_KEY, toolCallsOf } from '../../src/wire.js';
import { ASK_SCHEMA, STDIO_FIXTURE, startMcpHttpServer, type RunningMcpHttpServer } from '../fixtures/mcp-server.js';
import { answer, answerMessage, ask, endOf, reply, toolCalls } from './elicitation-support.js';
import { collect, send, sendStream, startTestHarness, textOf, type TestHarness } from './support.js';
import { poll } from '../support/wait.js';
import { elicitationViolation } from '../support/elicitation-schema.js';
import { ELICITATION_EXTENSION_URI } from '../../src/elicitations.js';
import { dataOf } from './support.js';
import type { StreamResponse } from '@a2a-js/sdk';

/** Every data part of the extension's notices among `events`, checked against its schema. */
function checkedParts(events: StreamResponse[]): unknown[] {
  const found: unknown[] = [];
  for (const e of events) {
    const message = e.payload?.$case === 'statusUpdate' ? e.payload.value.status?.message : undefined;
    const notice = String(message?.metadata?.[NOTICE_KEY] ?? '');
    if (!notice.startsWith('elicitation')) continue;
    const data = dataOf(message);
    assert.equal(elicitationViolation(data), undefined, `${notice}: ${JSON.stringify(data)}`);
    found.push(data);
  }
  return found;
}

let h: TestHarness;
let quick: TestHarness;
let web: RunningMcpHttpServer;

before(async () => {
  web = await startMcpHttpServer();
  const mcpServers = { fx: { ...STDIO_FIXTURE, cwd: process.cwd() }, fxh: { url: web.url } };
  h = await startTestHarness({ script: { toolCalls, reply }, config: { mcpServers } });
  quick = await startTestHarness({
    script: { toolCalls, reply },
    config: { mcpServers: { fxh: { url: web.url } }, elicitationTimeoutMs: 300 },
  });
});

after(async () => {
  await h?.close();
  await quick?.close();
  await web?.close();
});

const ADA = { name: 'Ada', age: 36, admin: true, color: 'red' };

describe('tool calls that ask the user (issue 39, TOOL-5)', () => {
  for (const server of ['fx', 'fxh']) {
    it(`issue 39 / TOOL-5 (${server}): a form pauses the turn in INPUT_REQUIRED with the question; an accepted answer resumes it and the call goes on`, async () => {
      const client = await h.client('JSONRPC');
      const asked = await ask(client, `please ask on ${server}`);
      assert.equal(asked.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      assert.match(textOf(asked.message), /Who are you\?/, 'the status message says the question as text');
      assert.match(textOf(asked.message), /name: string, required/, 'and its fields');
      assert.deepEqual(asked.question.schema, ASK_SCHEMA, 'its data part holds the JSON Schema');
      assert.equal(asked.question.tool, `${server}_ask`);
      const task = await client.getTask({ tenant: '', id: asked.taskId, historyLength: undefined });
      assert.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, 'GetTask shows the question too');

      const events = await answer(client, asked.taskId, {
        elicitation: asked.question.id,
        action: 'accept',
        content: ADA,
      });
      assert.equal(checkedParts(asked.events).length, 1, 'the question is valid against the extension schema');
      const parts = checkedParts(events);
      assert.deepEqual(
        parts,
        [
          { elicitation: asked.question.id, action: 'accept', content: ADA },
          { elicitation: asked.question.id, action: 'accept', ended: 'answered' },
        ],
        'the answer recorded, then the call going on, each valid',
      );
      const end = endOf(events);
      assert.equal(end.state, TaskState.TASK_STATE_INPUT_REQUIRED, 'the turn ended as turns end');
      assert.equal(textOf(end.message), `tool said: answered accept ${JSON.stringify(ADA)}`);
      const calls = toolCallsOf(
        (await client.getTask({ tenant: '', id: asked.taskId, historyLength: undefined })).history.flatMap(
          (m) => m.parts,
        ),
      );
      assert.equal(calls.at(-1)?.status, 'succeeded', 'the call ended as it did');
    });
  }

  for (const action of ['decline', 'cancel'] as const) {
    it(`issue 39 / TOOL-5: "${action}" is passed on to the server, and the turn resumes`, async () => {
      const client = await h.client('HTTP+JSON');
      const asked = await ask(client, 'please ask on fxh');
      const events = await answer(client, asked.taskId, { elicitation: asked.question.id, action });
      assert.equal(textOf(endOf(events).message), `tool said: answered ${action} {}`);
    });
  }

  it('issue 39 / TOOL-5: an answer that does not fit the schema is refused with its error, and the task keeps waiting', async () => {
    const client = await h.client('JSONRPC');
    const asked = await ask(client, 'please ask on fx');
    await assert.rejects(
      answer(client, asked.taskId, { elicitation: asked.question.id, action: 'accept', content: { age: 'old' } }),
      (error: Error) => /does not fit the question/.test(error.message) && /name/.test(error.message),
    );
    await assert.rejects(
      answer(client, asked.taskId, { elicitation: 'not-this-one', action: 'accept', content: ADA }),
      /No question "not-this-one" waits/,
    );
    const task = await client.getTask({ tenant: '', id: asked.taskId, historyLength: undefined });
    assert.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, 'still waiting');
    assert.equal(task.status?.message?.messageId, asked.message.messageId, 'on the same question');
    const events = await answer(client, asked.taskId, {
      elicitation: asked.question.id,
      action: 'accept',
      content: { name: 'Bo' },
    });
    assert.equal(textOf(endOf(events).message), 'tool said: answered accept {"name":"Bo"}');
  });

  it('issue 39 / TOOL-5: a question nobody answers within elicitationTimeoutMs is declined, and said so', async () => {
    const client = await quick.client('JSONRPC');
    const asked = await ask(client, 'please ask on fxh');
    const task = await poll('the turn ending', async () => {
      const t = await client.getTask({ tenant: '', id: asked.taskId, historyLength: undefined });
      return textOf(t.status?.message).startsWith('tool said') && t;
    });
    assert.equal(textOf(task.status?.message), 'tool said: answered decline {}');
    const said = task.history.find((m) => m.metadata?.[NOTICE_KEY] === ELICITATION_ENDED_NOTICE);
    assert.match(textOf(said), /Nobody answered within 300 ms: the question was declined/);
  });

  it('issue 39 / TOOL-5: /stop ends a turn waiting on a question, and CancelTask cancels one', async () => {
    const client = await h.client('JSONRPC');
    const asked = await ask(client, 'please ask on fxh');
    await send(client, '/stop', { taskId: asked.taskId });
    const stopped = await poll('the stopped turn ending', async () => {
      const t = await client.getTask({ tenant: '', id: asked.taskId, historyLength: undefined });
      return (
        t.status?.message?.metadata?.[NOTICE_KEY] !== 'elicitation' &&
        t.status?.message?.metadata?.command !== 'stop' &&
        t
      );
    });
    assert.notEqual(stopped.status?.state, TaskState.TASK_STATE_AUTH_REQUIRED);
    const again = await ask(client, 'please ask on fxh', asked.taskId);
    const canceled = await client.cancelTask({ tenant: '', id: again.taskId, metadata: {} });
    assert.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED);
  });

  it('issue 39 / TOOL-5: a link (URL mode) pauses in AUTH_REQUIRED with the URL; the server saying it is done resumes the turn', async () => {
    const client = await h.client('JSONRPC');
    const asked = await ask(client, 'please sign in on fxh');
    assert.equal(asked.state, TaskState.TASK_STATE_AUTH_REQUIRED);
    assert.match(textOf(asked.message), /http:\/\/127\.0\.0\.1:9\/sign-in\//, 'the status message holds the URL');
    const events = collect(client.resubscribeTask({ tenant: '', id: asked.taskId }));
    await (
      await web.linkAsked(1)
    )();
    const seen = await events;
    assert.equal(textOf(endOf(seen).message), 'tool said: sign-in accept');
  });

  it('issue 39 / TOOL-5: a link (URL mode) over stdio resumes when the user says "done"', async () => {
    const client = await h.client('JSONRPC');
    const asked = await ask(client, 'please sign in on fx');
    assert.equal(asked.state, TaskState.TASK_STATE_AUTH_REQUIRED);
    const events = await collect(sendStream(client, 'done', { taskId: asked.taskId }));
    assert.equal(textOf(endOf(events).message), 'tool said: sign-in accept');
  });

  it('issue 39: the card declares the elicitation extension beside the tool-calls one', async () => {
    const card = await (await h.client('JSONRPC')).getAgentCard();
    const entry = card.capabilities?.extensions.find((e) => e.uri === ELICITATION_EXTENSION_URI);
    assert.equal(entry?.required, false);
  });

  it('issue 39: "done" while no link waits is an ordinary message', async () => {
    const client = await h.client('JSONRPC');
    const task = await send(client, 'done');
    assert.equal(textOf(task.status?.message), 'plain answer to done');
    assert.ok(answerMessage(task.id, { elicitation: 'x', action: 'cancel' }).parts.length === 1);
  });
});
