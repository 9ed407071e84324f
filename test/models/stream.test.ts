/**
 * `streamReply` against the fixture server: what goes over the wire, the deltas and usage that
 * come back, and every way a provider can fail (each a `provider_failed` without the key), or
 * be aborted (the fixture sees its connection closed).
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { HarnessError } from '../../src/errors.js';
import { isAbortError, streamReply, type StreamReplyOptions } from '../../src/models/stream.js';
import { replyText } from './reply-text.js';
import {
  startModelServer,
  unusedBaseURL,
  type ModelServerScript,
  type RunningModelServer,
} from '../fixtures/model-server.js';

const SECRET = 'sk-test-SECRET-0123456789abcdef';
let server: RunningModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function modelOn(script: ModelServerScript, model = 'small') {
  server = await startModelServer(script);
  const provider = createOpenAICompatible({
    name: 'local',
    baseURL: server.baseURL,
    apiKey: SECRET,
    includeUsage: true,
  });
  return provider(model);
}

const ask: StreamReplyOptions = {
  system: 'You are terse.',
  messages: [{ role: 'user', content: 'Say hello' }],
  modelName: 'local:small',
  maxRetries: 0,
};

/** Runs a reply to its end and returns the provider_failed error it must throw. */
async function failure(options: Partial<StreamReplyOptions> & { script: ModelServerScript }): Promise<HarnessError> {
  const model = await modelOn(options.script);
  const error = await replyText(model, { ...ask, ...options }).then(
    () => assert.fail('expected provider_failed'),
    (error: unknown) => error,
  );
  assert.ok(error instanceof HarnessError, `expected a HarnessError, got ${String(error)}`);
  assert.equal(error.code, 'provider_failed');
  assert.match(error.message, /^Model local:small failed: /);
  assert.ok(!error.message.includes(SECRET) && !error.message.includes('0123456789abcdef'), 'the key leaked');
  assert.ok(!error.message.includes('127.0.0.1') && !error.message.includes('\n    at '), error.message);
  assert.equal(error.cause, undefined);
  return error;
}

describe('streamReply with an OpenAI-compatible server', () => {
  it('yields the text deltas in order and returns the usage', async () => {
    const model = await modelOn({ reply: { small: 'One two three four.' } });
    const deltas: string[] = [];
    const reply = streamReply(model, ask);
    let step = await reply.next();
    for (; !step.done; step = await reply.next()) deltas.push(step.value);
    assert.deepEqual(deltas, ['One ', 'two ', 'three ', 'four.']);
    assert.deepEqual(step.value, { inputTokens: 5, outputTokens: 4, finishReason: 'stop' });
  });

  it('sends the model id, the system prompt, the messages and the key', async () => {
    const model = await modelOn({ reply: (body) => `You asked ${body.model}.` }, 'llama3.2:3b');
    const history = [
      { role: 'user' as const, content: 'First question' },
      { role: 'assistant' as const, content: 'First answer' },
      { role: 'user' as const, content: 'Second question' },
    ];
    const { text } = await replyText(model, { ...ask, messages: history });
    assert.equal(text, 'You asked llama3.2:3b.');
    const [request] = server!.requests;
    assert.equal(request?.path, '/v1/chat/completions');
    assert.equal(request?.body.model, 'llama3.2:3b');
    assert.equal(request?.body.stream, true);
    assert.deepEqual(request?.body.messages, [{ role: 'system', content: 'You are terse.' }, ...history]);
    assert.equal(request?.authorization, `Bearer ${SECRET}`);
  });

  it("reports a rejected key (401) with the provider's words, the key it quoted back redacted", async () => {
    const error = await failure({
      script: { fail: { kind: 'status', status: 401, message: `Incorrect API key provided: ${SECRET}.` } },
    });
    assert.equal(
      error.message,
      'Model local:small failed: the provider rejected the API key (HTTP 401). The provider said: "Incorrect API key provided: [redacted]".',
    );
  });

  it("reports an unknown model (404) with the provider's words, a URL's credentials removed", async () => {
    const error = await failure({
      script: {
        fail: {
          kind: 'status',
          status: 404,
          message: `The model small does not exist (key ${SECRET}, see https://user:pw@docs.example/x)`,
        },
      },
    });
    assert.equal(
      error.message,
      'Model local:small failed: the provider does not know this model (HTTP 404). The provider said: "The model small does not exist (key [redacted], see https://[redacted]@docs.example/x)".',
    );
  });

  it('quotes a body the provider SDK cannot read as its text, bounded', async () => {
    const page = `<html><body><h1>502 Bad Gateway</h1><p>Authorization: Bearer ${SECRET}</p>${'x '.repeat(300)}</body></html>`;
    const error = await failure({ script: { fail: { kind: 'status', status: 400, body: page } } });
    const said = /The provider said: "(.*)"\.$/.exec(error.message)?.[1] ?? assert.fail(error.message);
    assert.match(said, /^502 Bad Gateway Authorization: Bearer \[redacted\] x x x/);
    assert.ok(said.length <= 200 && said.endsWith('…'), said);
  });

  it('leaves out words that only repeat the HTTP status', async () => {
    const error = await failure({ script: { fail: { kind: 'status', status: 429, body: '' } } });
    assert.equal(error.message, 'Model local:small failed: the provider is rate limiting or out of quota (HTTP 429).');
  });

  it('reports a server error after its retries, each retry told at once', async () => {
    const notices: string[] = [];
    const error = await failure({
      maxRetries: 1,
      onRetry: (notice) => notices.push(notice),
      script: { fail: { kind: 'status', status: 503, message: 'overloaded', headers: { 'retry-after-ms': '0' } } },
    });
    assert.equal(
      error.message,
      'Model local:small failed: the provider had a server error (HTTP 503), after 2 attempts. The provider said: "overloaded".',
    );
    assert.equal(server!.requests.length, 2);
    assert.deepEqual(notices, [
      'Model local:small failed: the provider had a server error (HTTP 503). The provider said: "overloaded". Retrying (attempt 2 of 2)…',
    ]);
  });

  it('a rate limit (429) then a reply: the retry is told before the reply starts', async () => {
    let requests = 0;
    const model = await modelOn({
      reply: 'Hello.',
      fail: () =>
        ++requests === 1
          ? { kind: 'status', status: 429, message: 'Rate limit reached', headers: { 'retry-after-ms': '0' } }
          : undefined,
    });
    const seen: string[] = [];
    const reply = streamReply(model, { ...ask, maxRetries: 2, onRetry: (notice) => seen.push(`notice: ${notice}`) });
    for await (const delta of reply) seen.push(delta);
    assert.deepEqual(seen, [
      'notice: Model local:small failed: the provider is rate limiting or out of quota (HTTP 429). The provider said: "Rate limit reached". Retrying (attempt 2 of 3)…',
      'Hello.',
    ]);
  });

  it('a failure that is not tried again (400) is told once, as the failure, not as a retry', async () => {
    const notices: string[] = [];
    await failure({
      maxRetries: 2,
      onRetry: (notice) => notices.push(notice),
      script: { fail: { kind: 'status', status: 400, message: 'bad request' } },
    });
    assert.deepEqual(notices, []);
    assert.equal(server!.requests.length, 1);
  });

  it('reports a stream that closes mid-way, after the deltas that did arrive', async () => {
    const model = await modelOn({ fail: { kind: 'close-mid-stream', afterChunks: 2 } });
    const received: string[] = [];
    await assert.rejects(
      async () => {
        for await (const delta of streamReply(model, ask)) received.push(delta);
      },
      {
        name: 'HarnessError',
        code: 'provider_failed',
        message: 'Model local:small failed: the connection closed before the reply was complete.',
      },
    );
    assert.deepEqual(received, ['part0 ', 'part1 ']);
  });

  it('reports a stream that ends cleanly but too early', async () => {
    const error = await failure({ script: { fail: { kind: 'close-mid-stream', afterChunks: 2, graceful: true } } });
    assert.equal(error.message, 'Model local:small failed: the reply stream ended before the model finished.');
  });

  it('reports garbage', async () => {
    const error = await failure({ script: { fail: { kind: 'garbage' } } });
    assert.equal(error.message, 'Model local:small failed: the provider answered something that is not a valid reply.');
  });

  it('reports a server that does not answer', async () => {
    server = await startModelServer();
    const model = createOpenAICompatible({ name: 'local', baseURL: await unusedBaseURL(), apiKey: SECRET })('small');
    await assert.rejects(replyText(model, ask), {
      code: 'provider_failed',
      message: 'Model local:small failed: the provider refused the connection (is the server running?).',
    });
  });

  it('times out a hanging server, and closes the request', async () => {
    // The server never answers: only the timeout can end the reply, as its message says.
    const error = await failure({ timeoutMs: 300, script: { fail: { kind: 'hang' } } });
    assert.equal(error.message, 'Model local:small failed: no complete reply within 300 ms (timed out).');
    await server!.waitForAborted(1);
  });

  it('times out a reply that is too slow as a whole', async () => {
    // Two chunks come, then the rest never does: the reply as a whole misses the timeout.
    const error = await failure({
      timeoutMs: 250,
      script: { reply: 'a b c d e f g h', hold: { afterChunks: 2, until: new Promise(() => {}) } },
    });
    assert.match(error.message, /timed out/);
    await server!.waitForAborted(1);
  });
});

describe('streamReply cancellation', () => {
  it('aborts the HTTP request and throws an AbortError the caller can tell apart', async () => {
    const model = await modelOn({ chunkDelayMs: 50, reply: 'one two three four five six seven eight nine ten' });
    const controller = new AbortController();
    const received: string[] = [];
    const error = await (async () => {
      for await (const delta of streamReply(model, { ...ask, abortSignal: controller.signal })) {
        received.push(delta);
        if (received.length === 2) controller.abort();
      }
    })().then(
      () => assert.fail('expected an abort'),
      (error: unknown) => error,
    );
    assert.ok(isAbortError(error), `expected an AbortError, got ${String(error)}`);
    assert.ok(!(error instanceof HarnessError));
    assert.deepEqual(received, ['one ', 'two ']);
    await server!.waitForAborted(1);
  });

  it('aborts a request still waiting for its answer', async () => {
    const model = await modelOn({ fail: { kind: 'hang' } });
    const controller = new AbortController();
    const replied = replyText(model, { ...ask, abortSignal: controller.signal });
    await server!.waitForRequest();
    controller.abort();
    await assert.rejects(replied, isAbortError);
    await server!.waitForAborted(1);
  });

  it('aborts the request when the consumer stops early', async () => {
    const model = await modelOn({ chunkDelayMs: 50, reply: 'one two three four five six' });
    for await (const delta of streamReply(model, ask)) {
      assert.equal(delta, 'one ');
      break;
    }
    await server!.waitForAborted(1);
  });

  it('does not start when already aborted', async () => {
    const model = await modelOn({});
    await assert.rejects(replyText(model, { ...ask, abortSignal: AbortSignal.abort() }), isAbortError);
    assert.equal(server!.requests.length, 0);
  });
});
