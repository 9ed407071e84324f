/** The fixture server itself: its non-streaming answer, and that close() ends what is open. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText } from 'ai';
import { startModelServer } from '../fixtures/model-server.js';

describe('fixture model server', () => {
  it('answers a non-streaming request with JSON and usage', async () => {
    const server = await startModelServer({ reply: { big: 'Plain answer here.' } });
    try {
      const model = createOpenAICompatible({ name: 'local', baseURL: server.baseURL })('big');
      const result = await generateText({ model, prompt: 'one two three' });
      assert.equal(result.text, 'Plain answer here.');
      assert.equal(result.usage.inputTokens, 3);
      assert.equal(result.usage.outputTokens, 3);
      assert.notEqual(server.requests[0]?.body.stream, true);
    } finally {
      await server.close();
    }
  });

  it('lists its models and answers 404 elsewhere', async () => {
    const server = await startModelServer({ models: ['m1'] });
    try {
      assert.deepEqual(await (await fetch(`${server.baseURL}/models`)).json(), { object: 'list', data: [{ id: 'm1', object: 'model', owned_by: 'fixture' }] });
      assert.equal((await fetch(`${server.url}/other`)).status, 404);
    } finally {
      await server.close();
    }
  });

  it('ends open connections on close, counting them as aborted', async () => {
    const server = await startModelServer({ fail: { kind: 'hang' } });
    const pending = fetch(`${server.baseURL}/chat/completions`, { method: 'POST', body: '{"model":"x","stream":true}' }).then(
      () => 'answered',
      (error: unknown) => error,
    );
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const started = Date.now();
    await server.close();
    assert.ok(Date.now() - started < 1000);
    assert.ok((await pending) instanceof TypeError, 'the client should see its connection closed');
    assert.equal(server.aborted, 1);
  });
});
