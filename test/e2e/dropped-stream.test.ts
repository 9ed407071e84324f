/**
 * A client that drops a `SendStreamingMessage` mid-turn lets go of its stream; the turn goes
 * on and is stored whole. The test waits for the turn's end by resending the message (CMD-34):
 * the resend follows the turn and answers with the task once the first request has stored it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { TaskState, type Task } from '@a2a-js/sdk';
import { send, startTestHarness, textOf, userMessage, type TestHarness } from './support.js';

const REPLY = Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ');

let h: TestHarness;

before(async () => {
  h = await startTestHarness({ script: { reply: REPLY, chunkDelayMs: 20 } });
});

after(async () => {
  await h?.close();
});

/** Starts a streamed turn over raw JSON-RPC, waits for its first artifact update, destroys the socket. */
function streamAndDrop(message: ReturnType<typeof userMessage>): Promise<void> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'SendStreamingMessage',
    params: {
      message: {
        messageId: message.messageId,
        taskId: message.taskId,
        role: 'ROLE_USER',
        parts: [{ text: 'Say thirty words', mediaType: 'text/plain' }],
      },
    },
  });
  return new Promise((resolve, reject) => {
    const req = request(
      `${h.harness.url}/a2a/jsonrpc`,
      { method: 'POST', headers: { 'content-type': 'application/json', 'a2a-version': '1.0' } },
      (res) => {
        let seen = '';
        res.on('data', (chunk: Buffer) => {
          seen += chunk.toString();
          if (!seen.includes('artifactUpdate')) return;
          req.destroy();
          resolve();
        });
      },
    );
    req.once('error', (error) => (req.destroyed ? undefined : reject(error)));
    req.end(body);
  });
}

function artifactText(task: Task): string {
  return task.artifacts
    .flatMap((a) => a.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')))
    .join('');
}

describe('a streamed turn whose client goes away', () => {
  it('goes on and is stored whole, over JSON-RPC', async () => {
    const client = await h.client('JSONRPC');
    const task = await send(client, '/status');
    const message = userMessage('Say thirty words', { taskId: task.id });
    const turns = h.chatRequests().length;
    await streamAndDrop(message);
    const resent = await send(client, 'Say thirty words', { taskId: task.id, messageId: message.messageId });
    assert.equal(resent.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(textOf(resent.status?.message), REPLY, 'the whole reply is the status message');
    const stored = await client.getTask({ tenant: '', id: task.id, historyLength: undefined });
    assert.equal(artifactText(stored), REPLY, 'every chunk was stored');
    assert.equal(h.chatRequests().length, turns + 1, 'one turn');
  });

  it('goes on and is stored whole, over gRPC (the call cancelled)', async () => {
    const client = await h.client('GRPC');
    const task = await send(client, '/status');
    const message = userMessage('Say thirty words', { taskId: task.id });
    const abort = new AbortController();
    const stream = client.sendMessageStream(
      { tenant: '', message, configuration: undefined, metadata: {} },
      { signal: abort.signal },
    );
    for (
      let next = await stream.next();
      !next.done && next.value.payload?.$case !== 'artifactUpdate';
      next = await stream.next()
    );
    abort.abort();
    await stream.return(undefined).catch(() => undefined);
    const resent = await send(client, 'Say thirty words', { taskId: task.id, messageId: message.messageId });
    assert.equal(textOf(resent.status?.message), REPLY);
    assert.equal(artifactText(await client.getTask({ tenant: '', id: task.id, historyLength: undefined })), REPLY);
  });
});
