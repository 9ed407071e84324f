/**
 * A conversation is a context (CMD-35): a new task in a context continues what the earlier
 * tasks of that context said, for the same user only; a sub-task is sent the conversation it
 * was started from, unless its command file says `context: none`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { TaskState } from '@a2a-js/sdk';
import { send, startTestHarness, type TestHarness } from './support.js';
import { poll } from '../support/wait.js';

let dir: string;
let h: TestHarness;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tiny-harness-conversation-'));
  writeFileSync(join(dir, 'clean.md'), '---\ndescription: Starts clean\ncontext: none\n---\nclean: $ARGUMENTS\n');
  writeFileSync(
    join(dir, 'aware.md'),
    '---\ndescription: Knows the conversation\ncontext: fork\n---\naware: $ARGUMENTS\n',
  );
  h = await startTestHarness({
    script: { reply: (body) => `noted ${body.messages.length}` },
    harness: {
      commandsDir: dir,
      auth: {
        tokens: new Map([
          ['alice-token', 'alice'],
          ['bob-token', 'bob'],
        ]),
      },
    },
  });
});

after(async () => {
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

const userTexts = (request: any): string[] =>
  request.messages.filter((m: any) => m.role === 'user').map((m: any) => String(m.content));
const requestWith = (text: string) =>
  h
    .chatRequests()
    .filter((r: any) => JSON.stringify(r.messages).includes(text))
    .at(-1);

describe('a conversation across tasks (CMD-35)', () => {
  it('CMD-35: a new task in a context is sent the earlier tasks of that context, oldest first, commands left out', async () => {
    const alice = await h.client('JSONRPC', { Authorization: 'Bearer alice-token' });
    const contextId = randomUUID();
    const first = await send(alice, 'my name is Ada', { contextId });
    await send(alice, '/status', { taskId: first.id });
    await send(alice, 'I like tea', { taskId: first.id });
    await alice.cancelTask({ tenant: '', id: first.id, metadata: {} });
    const second = await send(alice, 'what is my name?', { contextId });
    assert.notEqual(second.id, first.id, 'a new task');
    const request = requestWith('what is my name?');
    assert.deepEqual(userTexts(request), ['my name is Ada', 'I like tea', 'what is my name?']);
    assert.ok(
      request.messages.some((m: any) => m.role === 'assistant' && String(m.content).startsWith('noted')),
      'with the earlier replies',
    );
    assert.ok(!JSON.stringify(request.messages).includes('/status'), 'commands stay out (CMD-7)');
  });

  it("CMD-35: another user's tasks in the same context id are not sent", async () => {
    const alice = await h.client('JSONRPC', { Authorization: 'Bearer alice-token' });
    const bob = await h.client('JSONRPC', { Authorization: 'Bearer bob-token' });
    const contextId = randomUUID();
    await send(alice, 'alice secret 7', { contextId });
    await send(bob, 'bob asks', { contextId });
    assert.deepEqual(userTexts(requestWith('bob asks')), ['bob asks']);
  });

  it('a sub-task is sent the conversation it was started from, then its instruction', async () => {
    const alice = await h.client('HTTP+JSON', { Authorization: 'Bearer alice-token' });
    const parent = await send(alice, 'the secret is 42');
    const started = await send(alice, '/aware summarize', { taskId: parent.id });
    const child = started.status?.message?.metadata?.task_ref as string;
    await poll(
      'the sub-task completed',
      async () =>
        (await alice.getTask({ tenant: '', id: child, historyLength: 0 })).status?.state ===
        TaskState.TASK_STATE_COMPLETED,
    );
    assert.deepEqual(userTexts(requestWith('aware: summarize')), ['the secret is 42', 'aware: summarize']);
  });

  it('a command file with "context: none" starts its sub-task clean', async () => {
    const alice = await h.client('GRPC', { Authorization: 'Bearer alice-token' });
    const parent = await send(alice, 'the other secret is 43');
    const started = await send(alice, '/clean summarize', { taskId: parent.id });
    const child = started.status?.message?.metadata?.task_ref as string;
    await poll(
      'the sub-task completed',
      async () =>
        (await alice.getTask({ tenant: '', id: child, historyLength: 0 })).status?.state ===
        TaskState.TASK_STATE_COMPLETED,
    );
    assert.deepEqual(userTexts(requestWith('clean: summarize')), ['clean: summarize']);
  });
});
