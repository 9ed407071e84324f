/** The built-in offline models: deterministic replies in several chunks, usage, abort. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { streamText } from 'ai';
import { BuiltinModel } from '../../src/models/builtin.js';
import { isAbortError, streamReply } from '../../src/models/stream.js';
import { within } from '../support/wait.js';
import { replyText } from './reply-text.js';

const conversation = [
  { role: 'user' as const, content: 'Hello there' },
  { role: 'assistant' as const, content: 'Hi! How can I help?' },
  { role: 'user' as const, content: 'Repeat this please' },
];

async function deltas(model: BuiltinModel): Promise<string[]> {
  const result = streamText({ model, system: 'Be kind.', messages: conversation });
  const out: string[] = [];
  for await (const delta of result.textStream) out.push(delta);
  return out;
}

describe('builtin:echo', () => {
  it('repeats the last user message and says it is not an AI, in several chunks', async () => {
    const chunks = await deltas(new BuiltinModel('echo'));
    assert.ok(chunks.length > 5, `expected several chunks, got ${chunks.length}`);
    const text = chunks.join('');
    assert.match(text, /^You said: Repeat this please\n/);
    assert.match(text, /built-in offline model.*not an AI/);
    for (const hint of ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'Ollama', 'config file'])
      assert.ok(text.includes(hint), hint);
  });

  it('is deterministic, chunk for chunk', async () => {
    assert.deepEqual(await deltas(new BuiltinModel('echo')), await deltas(new BuiltinModel('echo')));
  });

  it('counts usage in words, through the harness helper', async () => {
    const model = new BuiltinModel('echo');
    const { text, inputTokens, outputTokens, finishReason } = await replyText(model, {
      system: 'Be kind.',
      messages: conversation,
    });
    assert.equal(inputTokens, 2 + 2 + 5 + 3); // system + three messages
    assert.equal(outputTokens, text.split(/\s+/).filter(Boolean).length);
    assert.equal(finishReason, 'stop');
  });

  it('answers through doGenerate too', async () => {
    const model = new BuiltinModel('echo');
    const result = await model.doGenerate({ prompt: [{ role: 'user', content: [{ type: 'text', text: 'ping' }] }] });
    assert.deepEqual(result.content[0], {
      type: 'text',
      text: model.reply([{ role: 'user', content: [{ type: 'text', text: 'ping' }] }]),
    });
    assert.equal(result.usage.inputTokens.total, 1);
  });
});

describe('builtin:stats', () => {
  it('describes the conversation and names itself', async () => {
    const text = (await deltas(new BuiltinModel('stats'))).join('');
    assert.equal(
      text,
      'I am builtin:stats, a built-in offline model (not an AI). I was sent 4 messages (1 system, 2 user, 1 assistant, 0 tool) with 12 words in total; the last user message has 3 words.',
    );
  });
});

describe('builtin models and abort', () => {
  it('wait between chunks when asked, and stop on abort with nothing more sent', async () => {
    const model = new BuiltinModel('echo', { chunkDelayMs: 20 });
    const controller = new AbortController();
    const reply = streamReply(model, { messages: conversation, abortSignal: controller.signal });
    const received: string[] = [];
    await assert.rejects(async () => {
      for await (const delta of reply) {
        received.push(delta);
        if (received.length === 3) controller.abort();
      }
    }, isAbortError);
    assert.equal(received.length, 3);
  });

  it('an abort ends a wait between chunks instead of sitting it out', async () => {
    // An hour between chunks: the reply can only end this side of the hour through the abort.
    const model = new BuiltinModel('echo', { chunkDelayMs: 3_600_000 });
    const controller = new AbortController();
    const first = streamReply(model, { messages: conversation, abortSignal: controller.signal }).next();
    controller.abort();
    await within('the aborted reply', assert.rejects(first, isAbortError));
  });

  it('refuse to start when already aborted', async () => {
    const model = new BuiltinModel('stats');
    await assert.rejects(model.doStream({ prompt: [], abortSignal: AbortSignal.abort() }), { name: 'AbortError' });
    await assert.rejects(model.doGenerate({ prompt: [], abortSignal: AbortSignal.abort() }), { name: 'AbortError' });
  });
});
