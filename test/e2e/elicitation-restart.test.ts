/**
 * A tool call's question to the user across a restart (issue 39, TOOL-5): the task still asks
 * it after the harness stops and starts again; the MCP request (a stdio server's) cannot go on,
 * so the answer closes the call as failed and a turn tells the model, with the answer.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { elicitationOf } from '../../src/elicitations.js';
import { toolCallsOf } from '../../src/wire.js';
import { STDIO_FIXTURE } from '../fixtures/mcp-server.js';
import { answer, ask, endOf, reply, toolCalls } from './elicitation-support.js';
import { startTestHarness, textOf, type TestHarness } from './support.js';

const dataDir = mkdtempSync(join(tmpdir(), 'tiny-harness-elicitation-restart-'));
const running: TestHarness[] = [];
const start = async () => {
  const h = await startTestHarness({
    dataDir,
    script: { toolCalls, reply },
    config: { mcpServers: { fx: { ...STDIO_FIXTURE, cwd: process.cwd() } } },
  });
  running.push(h);
  return h;
};

after(async () => {
  for (const h of running) await h.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('a question waiting across a restart (issue 39, TOOL-5)', () => {
  it('issue 39 / TOOL-5: the question survives a restart; its answer fails the call clearly, and the model is told', async () => {
    const first = await start();
    const asked = await ask(await first.client('JSONRPC'), 'please ask on fx');
    await first.close();
    running.splice(running.indexOf(first), 1);

    const second = await start();
    const client = await second.client('JSONRPC');
    const task = await client.getTask({ tenant: '', id: asked.taskId, historyLength: undefined });
    assert.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(elicitationOf(task.status?.message)?.id, asked.question.id, 'the task still asks the same question');

    const events = await answer(client, asked.taskId, {
      elicitation: asked.question.id,
      action: 'accept',
      content: { name: 'Ada' },
    });
    const sent = second.chatRequests().at(-1).messages.at(-1).content as string;
    assert.match(sent, /The user accepted with \{"name":"Ada"\}/, 'the model is told the answer');
    assert.match(sent, /could not go on, so the call failed/, 'and that the call failed, clearly');
    assert.match(textOf(endOf(events).message), /^plain answer to \[The tool call fx_ask/);
    const after = await client.getTask({ tenant: '', id: asked.taskId, historyLength: undefined });
    const calls = new Map(toolCallsOf(after.history.flatMap((m) => m.parts)).map((c) => [c.id, c.status]));
    assert.ok(![...calls.values()].includes('running'), 'no call shows as running');
  });
});
