/**
 * The terminal chat opened on a task whose turn is running (`--task`, as the line of a running
 * sub-agent says): its conversation so far, then its running turn followed to the reply, from the
 * generation it was read at, so the reply shows whether the turn ends before or after the chat
 * subscribes. Against the harness and the fixture model, on a pretend terminal.
 */
import { describe, it } from 'node:test';
import { userMessage } from '../../src/client/connect.js';
import { startTestHarness } from '../e2e/support.js';
import { lastMessage } from '../fixtures/model-server.js';
import { fakeChat, type FakeChat } from './fake-terminal.js';

describe('tiny-harness chat --task on a running task', () => {
  it("issue 35: a chat opened on a running task (a sub-agent's, as its line says) follows its turn to the reply", async () => {
    let releaseTurn = () => {};
    const held = new Promise<void>((resolve) => (releaseTurn = resolve));
    const h = await startTestHarness({
      script: {
        reply: (body) => `re: ${lastMessage(body).content}`,
        hold: (body) => (lastMessage(body).content.includes('review') ? { afterChunks: 1, until: held } : undefined),
      },
    });
    let opened: FakeChat | undefined;
    try {
      const client = await h.client('JSONRPC');
      const message = userMessage('review the change', {});
      const events = client.sendMessageStream({ tenant: '', message, configuration: undefined, metadata: {} });
      const first = await events.next();
      const taskId = first.value?.payload?.$case === 'task' ? first.value.payload.value.id : '';
      opened = await fakeChat(h.harness.url, { taskId });
      await opened.terminal.waitFor('the task resumed', (s) => s.includes(`(resumed task ${taskId})`));
      releaseTurn();
      // Followed after the generation read: whether the subscription opened before the turn ended or after.
      await opened.terminal.waitFor("the task's reply, followed", (s) => s.includes('re: review the change'));
      for await (const _ of events);
    } finally {
      releaseTurn();
      await opened?.close();
      opened = undefined;
      await h.close();
    }
  });
});
