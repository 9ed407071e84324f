import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { credentials, makeGenericClientConstructor, Metadata } from '@grpc/grpc-js';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { COMMANDS_EXTENSION_URI } from '../../src/commands/index.js';
import { startTestHarness, userMessage, type TestHarness } from './support.js';

let h: TestHarness;

before(async () => {
  h = await startTestHarness();
});

after(async () => {
  await h?.close();
});

function jsonRpc(method: string, text: string, extensions?: string) {
  return fetch(`${h.harness.url}/a2a/jsonrpc`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'a2a-version': '1.0',
      ...(extensions ? { 'a2a-extensions': extensions } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: { message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text }] } },
    }),
  });
}

function rest(path: string, text: string, extensions?: string) {
  return fetch(`${h.harness.url}/a2a/rest/${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'a2a-version': '1.0',
      ...(extensions ? { 'a2a-extensions': extensions } : {}),
    },
    body: JSON.stringify({ message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text }] } }),
  });
}

async function grpcHeaders(text: string, extensions?: string): Promise<string[]> {
  const Client = makeGenericClientConstructor(A2AService as any, 'A2AService');
  const client = new Client(h.harness.grpcAddress!, credentials.createInsecure()) as any;
  const metadata = new Metadata();
  metadata.set('a2a-version', '1.0');
  if (extensions) metadata.set('a2a-extensions', extensions);
  try {
    return await new Promise<string[]>((resolve, reject) => {
      let headers: string[] = [];
      const call = client.sendMessage(
        { tenant: '', message: userMessage(text), configuration: undefined, metadata: {} },
        metadata,
        (error: Error | null) => (error ? reject(error) : resolve(headers)),
      );
      call.on('metadata', (received: Metadata) => (headers = received.get('a2a-extensions').map(String)));
    });
  } finally {
    client.close();
  }
}

describe('activating the extension', () => {
  for (const text of ['/help', 'an ordinary question']) {
    it(`CMD-17: the A2A-Extensions header comes back on every transport (${text})`, async () => {
      const requested = `https://example.test/other, ${COMMANDS_EXTENSION_URI}`;
      const blocking = await jsonRpc('SendMessage', text, requested);
      assert.equal(blocking.headers.get('a2a-extensions'), COMMANDS_EXTENSION_URI);
      assert.ok((await blocking.json()).result);
      const streaming = await jsonRpc('SendStreamingMessage', text, requested);
      assert.equal(streaming.headers.get('a2a-extensions'), COMMANDS_EXTENSION_URI);
      await streaming.text();
      const restBlocking = await rest('message:send', text, requested);
      assert.equal(restBlocking.headers.get('a2a-extensions'), COMMANDS_EXTENSION_URI);
      await restBlocking.text();
      const restStreaming = await rest('message:stream', text, requested);
      assert.equal(restStreaming.headers.get('a2a-extensions'), COMMANDS_EXTENSION_URI);
      await restStreaming.text();
      assert.deepEqual(await grpcHeaders(text, requested), [COMMANDS_EXTENSION_URI]);
    });
  }

  it('CMD-17: commands work without activating the extension, and nothing is echoed then', async () => {
    const response = await jsonRpc('SendMessage', '/help');
    assert.equal(response.headers.get('a2a-extensions'), null);
    const body = await response.json();
    assert.equal(body.result.task.status.message.metadata.command, 'help');
  });
});
