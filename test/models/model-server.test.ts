/** The fixture server itself: its non-streaming answer, a held reply, and that close() ends what is open. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText } from 'ai';
import { startModelServer } from '../fixtures/model-server.js';
import { within } from '../support/wait.js';

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
      assert.deepEqual(await (await fetch(`${server.baseURL}/models`)).json(), {
        object: 'list',
        data: [{ id: 'm1', object: 'model', owned_by: 'fixture' }],
      });
      assert.equal((await fetch(`${server.url}/other`)).status, 404);
    } finally {
      await server.close();
    }
  });

  it('ends open connections on close, counting them as aborted', async () => {
    const server = await startModelServer({ fail: { kind: 'hang' } });
    const pending = fetch(`${server.baseURL}/chat/completions`, {
      method: 'POST',
      body: '{"model":"x","stream":true}',
    }).then(
      () => 'answered',
      (error: unknown) => error,
    );
    await server.waitForRequest();
    await within('close() with a request left hanging', server.close());
    assert.ok((await pending) instanceof TypeError, 'the client should see its connection closed');
    assert.equal(server.aborted, 1);
  });

  it('holds a streamed reply after the chunks asked until it is let go', async () => {
    let letGo!: () => void;
    const until = new Promise<void>((resolve) => (letGo = resolve));
    const server = await startModelServer({ reply: 'one two three four', hold: { afterChunks: 2, until } });
    try {
      const response = await fetch(`${server.baseURL}/chat/completions`, {
        method: 'POST',
        body: '{"model":"x","stream":true}',
      });
      const seen: string[] = [];
      const decoder = new TextDecoder();
      let buffer = '';
      const reader = response.body!.getReader();
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        const events = (buffer + decoder.decode(read.value, { stream: true })).split('\n\n');
        buffer = events.pop()!;
        for (const event of events) seen.push(...[...event.matchAll(/"content":"([^"]*)"/g)].map((match) => match[1]!));
        if (seen.length === 2 && !seen.includes('let go')) {
          // A full round trip to the same server: a reply not held would have been written by now.
          assert.equal((await fetch(`${server.baseURL}/models`)).status, 200);
          seen.push('let go');
          letGo();
        }
      }
      assert.deepEqual(seen, ['one ', 'two ', 'let go', 'three ', 'four']);
    } finally {
      await server.close();
    }
  });
});
