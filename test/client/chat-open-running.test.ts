/**
 * The terminal chat opened on a task whose turn is running (`--task`, as the line of a running
 * sub-agent says): its conversation so far, the reply streamed so far, then its running turn
 * followed to the reply from the generation it was read at, each word once. Against the harness
 * and the fixture model, on a pretend terminal.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StreamResponse } from '@a2a-js/sdk';
import { userMessage } from '../../src/client/connect.js';
import { startTestHarness } from '../e2e/support.js';
import { lastMessage } from '../fixtures/model-server.js';
import { fakeChat, type FakeChat } from './fake-terminal.js';

/** Opens a chat on a running turn held after `heldAfter` chunks of its reply, and follows it to the end. */
async function followHeldTurn(heldAfter: number): Promise<string> {
  let releaseTurn = () => {};
  const held = new Promise<void>((resolve) => (releaseTurn = resolve));
  const h = await startTestHarness({
    script: {
      reply: (body) => `re: ${lastMessage(body).content}`,
      hold: (body) =>
        lastMessage(body).content.includes('review') ? { afterChunks: heldAfter, until: held } : undefined,
    },
  });
  let opened: FakeChat | undefined;
  try {
    const client = await h.client('JSONRPC');
    const message = userMessage('review the change', {});
    const events = client.sendMessageStream({ tenant: '', message, configuration: undefined, metadata: {} });
    const first = await events.next();
    const taskId = first.value?.payload?.$case === 'task' ? first.value.payload.value.id : '';
    // With chunks before the hold, the chat opens once the first is stored: the task as read holds it.
    let next: IteratorResult<StreamResponse, void> | undefined;
    if (heldAfter > 0)
      do next = await events.next();
      while (!next.done && next.value.payload?.$case !== 'artifactUpdate');
    opened = await fakeChat(h.harness.url, { taskId });
    await opened.terminal.waitFor('the task resumed', (s) => s.includes(`(resumed task ${taskId})`));
    releaseTurn();
    await opened.terminal.waitFor("the task's reply, followed", (s) => s.includes('re: review the change'));
    for await (const _ of events);
    await opened.terminal.waitFor('the prompt back', (s) => s.trimEnd().endsWith('❯'));
    return opened.terminal.text;
  } finally {
    releaseTurn();
    await opened?.close();
    await h.close();
  }
}

/** After the welcome, each line that shows the reply (the prompt draws its line again) shows it whole, each word once. */
function assertReplyOnce(text: string): void {
  const after = text.slice(text.indexOf('Type a message'));
  const lines = after.split(/\r\n|\r|\n/).filter((line) => line.includes('review'));
  assert.ok(lines.length > 0, after);
  for (const line of lines) assert.equal(line.replace(/^[…❯] /, ''), 're: review the change', after);
}

describe('tiny-harness chat --task on a running task', () => {
  it("issue 35: a chat opened on a running task (a sub-agent's, as its line says) follows its turn to the reply", async () => {
    const text = await followHeldTurn(0);
    assertReplyOnce(text);
  });

  it('issue 35: opened after part of the reply streamed, it shows that part, then the rest, each word once', async () => {
    const text = await followHeldTurn(1);
    assertReplyOnce(text);
  });
});
