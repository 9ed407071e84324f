/**
 * `tiny-harness send` when a tool call asks the user (MCP elicitation, issue 39): the turn waits
 * for an answer, so send exits 5 as for a call waiting for approval, the question on standard
 * output; a link's question is answered with `send --task ID URL done`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SEND_EXIT } from '../../src/client/exit-codes.js';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { STDIO_FIXTURE } from '../fixtures/mcp-server.js';
import { reply, toolCalls } from '../e2e/elicitation-support.js';
import { runCli, taskLine } from './support.js';

let h: TestHarness;

before(async () => {
  h = await startTestHarness({
    script: { toolCalls, reply },
    config: { mcpServers: { fx: { ...STDIO_FIXTURE, cwd: process.cwd() } } },
  });
});

after(async () => {
  await h?.close();
});

describe('tiny-harness send: a tool call that asks (issue 39)', () => {
  it('a turn paused on a question exits 5, the question on standard output; "done" answers a link', async () => {
    // One at a time: MCP gives a question to the oldest call in flight on the server.
    const link = await runCli(['send', h.harness.url, 'please sign in on fx']);
    assert.equal(link.code, SEND_EXIT.awaitingApproval, link.stderr);
    assert.equal(taskLine(link.stderr).state, 'auth-required');
    assert.match(link.stdout, /Sign in to the fixture/);
    const done = await runCli(['send', '--task', taskLine(link.stderr).taskId, h.harness.url, 'done']);
    assert.equal(done.code, SEND_EXIT.ok, done.stderr);
    assert.match(done.stdout, /tool said: sign-in accept/);

    const form = await runCli(['send', '--stream', h.harness.url, 'please ask on fx']);
    assert.equal(form.code, SEND_EXIT.awaitingApproval, form.stderr);
    assert.equal(taskLine(form.stderr).state, 'input-required');
    assert.match(form.stdout, /Who are you\?/);
  });
});
