/**
 * `/fork [n]` (CMD-37) and `/context` end to end: a fork is a task of its own, in a context of
 * its own, of the same user, whose first turn sends its model what the source's would; `/context`
 * says what the next turn sends, part by part, tools and tokens included.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { COMMAND_KEY, FORKED_FROM_KEY, REPLY_ERROR_KEY, TASK_REF_KEY } from '../../src/wire.js';
import { lastMessage } from '../fixtures/model-server.js';
import { STDIO_FIXTURE } from '../fixtures/mcp-server.js';
import { dataOf, send, sendStream, startTestHarness, textOf, type TestHarness } from './support.js';
import { within } from '../support/wait.js';

const SYSTEM_PROMPT = 'You are the fork fixture.';
const ALICE = { Authorization: 'Bearer alice-token' };
const BOB = { Authorization: 'Bearer bob-token' };

let h: TestHarness;
/** Lets the held reply (a message that says "hold on") go on. */
let release: () => void;
const released = new Promise<void>((resolve) => (release = resolve));

before(async () => {
  h = await startTestHarness({
    // Each reply names what it answers, so every conversation differs.
    script: {
      reply: (body) => `re: ${String(lastMessage(body).content).slice(0, 40)}`,
      hold: (body) =>
        String(lastMessage(body).content).includes('hold on') ? { afterChunks: 1, until: released } : undefined,
    },
    config: { systemPrompt: SYSTEM_PROMPT, mcpServers: { fx: { ...STDIO_FIXTURE, cwd: process.cwd() } } },
    harness: {
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
  release();
  await h?.close();
});

const notFound = (error: any) => /not found/i.test(String(error?.message)) || error?.name === 'TaskNotFoundError';
const userTexts = (request: any): string[] =>
  request.messages.filter((m: any) => m.role === 'user').map((m: any) => String(m.content));
/** The newest model request whose last message is `text`. */
const requestEndingWith = (text: string) =>
  h
    .chatRequests()
    .filter((r: any) => r.messages.at(-1)?.content === text)
    .at(-1);

async function conversation(client: Client, texts: string[], ids: { contextId?: string } = {}): Promise<Task> {
  let task = await send(client, texts[0]!, ids);
  for (const text of texts.slice(1)) task = await send(client, text, { taskId: task.id });
  return task;
}

async function fork(client: Client, source: Task, args = '', messageId?: string) {
  const replied = await send(client, `/fork${args ? ` ${args}` : ''}`, { taskId: source.id, messageId });
  const reply = replied.status!.message!;
  return { reply, ref: reply.metadata?.[TASK_REF_KEY] as string | undefined, data: dataOf(reply) };
}

describe('/fork (CMD-37)', () => {
  it('CMD-37: /fork replies with the new task’s task_ref; the fork is a task of the same model in a new context, and its first turn sends what the source’s would', async () => {
    const alice = await h.client('JSONRPC', ALICE);
    const source = await conversation(alice, ['alpha fact', 'beta fact']);
    await send(alice, '/model fixture:large', { taskId: source.id });
    await send(alice, '/status', { taskId: source.id });
    const { ref, data } = await fork(alice, source);
    assert.match(ref ?? '', /^[0-9a-f-]{36}$/, 'the reply carries task_ref');
    assert.deepEqual(data, { taskId: ref, contextId: data.contextId, messages: 4 });
    const forked = await alice.getTask({ tenant: '', id: ref!, historyLength: undefined });
    assert.equal(forked.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(forked.contextId, data.contextId);
    assert.notEqual(forked.contextId, source.contextId, 'a new context');
    assert.deepEqual(forked.metadata?.[FORKED_FROM_KEY], { taskId: source.id });
    const stored = await alice.getTask({ tenant: '', id: source.id, historyLength: undefined });
    assert.deepEqual(
      forked.history.map((m) => m.messageId),
      stored.history.filter((m) => m.metadata?.[COMMAND_KEY] === undefined).map((m) => m.messageId),
      'the messages keep their ids',
    );
    assert.ok(forked.history.every((m) => m.taskId === ref && m.contextId === forked.contextId));

    await send(alice, 'what do you know?', { taskId: ref });
    const fromFork = requestEndingWith('what do you know?');
    await send(alice, 'what do you know?', { taskId: source.id });
    const fromSource = requestEndingWith('what do you know?');
    assert.notEqual(fromFork, fromSource);
    assert.equal(fromFork.model, 'large', 'the source’s model');
    assert.deepEqual(fromFork.messages, fromSource.messages, 'the same conversation, system prompt included');
    assert.deepEqual(userTexts(fromFork), ['alpha fact', 'beta fact', 'what do you know?']);
    assert.ok(!JSON.stringify(fromFork.messages).includes('/status'), 'commands stay out (CMD-7)');
  });

  it('CMD-37: neither conversation sees what is written to the other afterwards', async () => {
    const alice = await h.client('HTTP+JSON', ALICE);
    const source = await conversation(alice, ['shared start']);
    const { ref } = await fork(alice, source);
    await send(alice, 'only in the source', { taskId: source.id });
    await send(alice, 'only in the fork', { taskId: ref });
    assert.deepEqual(userTexts(requestEndingWith('only in the fork')), ['shared start', 'only in the fork']);
    await send(alice, 'source again', { taskId: source.id });
    assert.deepEqual(userTexts(requestEndingWith('source again')), [
      'shared start',
      'only in the source',
      'source again',
    ]);
    const stored = await alice.getTask({ tenant: '', id: source.id, historyLength: undefined });
    assert.ok(!JSON.stringify(stored.history).includes('only in the fork'));
  });

  it('CMD-37: /fork n copies the conversation as it stood before the n-th newest user message', async () => {
    const alice = await h.client('GRPC', ALICE);
    const source = await conversation(alice, ['first point', 'second point', 'third point']);
    await send(alice, '/status', { taskId: source.id });
    const { ref, data } = await fork(alice, source, '2');
    assert.equal(data.messages, 2, 'the first exchange');
    const forked = await alice.getTask({ tenant: '', id: ref!, historyLength: undefined });
    const stored = await alice.getTask({ tenant: '', id: source.id, historyLength: undefined });
    const second = stored.history.find((m) => textOf(m) === 'second point')!;
    assert.deepEqual(forked.metadata?.[FORKED_FROM_KEY], { taskId: source.id, messageId: second.messageId });
    await send(alice, 'then what?', { taskId: ref });
    assert.deepEqual(userTexts(requestEndingWith('then what?')), ['first point', 'then what?']);
  });

  it('CMD-37: a point that is not there, or not a number, is refused and forks nothing', async () => {
    const alice = await h.client('JSONRPC', ALICE);
    const source = await conversation(alice, ['lonely message']);
    for (const args of ['2', 'abc', '0']) {
      const { reply, ref, data } = await fork(alice, source, args);
      assert.equal(ref, undefined, `/fork ${args}: no fork`);
      if (args === '2') {
        assert.equal(data[REPLY_ERROR_KEY], 'no_such_point');
        assert.match(textOf(reply), /no point 2.*1 message of yours/);
      } else assert.match(textOf(reply), /is not a point/);
    }
  });

  it('CMD-37: the earlier tasks of the context are copied too, before the task', async () => {
    const alice = await h.client('JSONRPC', ALICE);
    const contextId = randomUUID();
    const first = await send(alice, 'earlier task fact', { contextId });
    await alice.cancelTask({ tenant: '', id: first.id, metadata: {} });
    const source = await send(alice, 'later task fact', { contextId });
    const { ref, data } = await fork(alice, source);
    assert.equal(data.messages, 4);
    await send(alice, 'all of it?', { taskId: ref });
    assert.deepEqual(userTexts(requestEndingWith('all of it?')), [
      'earlier task fact',
      'later task fact',
      'all of it?',
    ]);
  });

  it('CMD-37: /fork while a turn runs is refused (turn_running) and forks nothing; once the turn has ended it forks', async () => {
    const alice = await h.client('JSONRPC', ALICE);
    const source = await conversation(alice, ['before the long turn']);
    const events: StreamResponse[] = [];
    let chunked!: () => void;
    const firstChunk = new Promise<void>((resolve) => (chunked = resolve));
    const turn = (async () => {
      for await (const event of sendStream(alice, 'please hold on', { taskId: source.id })) {
        events.push(event);
        if (event.payload?.$case === 'artifactUpdate') chunked();
      }
    })();
    await within('the held turn’s first chunk', firstChunk);
    const refused = await fork(alice, source);
    assert.equal(refused.ref, undefined);
    assert.equal(refused.data[REPLY_ERROR_KEY], 'turn_running');
    release();
    await within('the held turn’s end', turn);
    const { ref, data } = await fork(alice, source);
    assert.ok(ref);
    assert.equal(data.messages, 4, 'the turn’s request and answer included');
  });

  it('CMD-37: the fork belongs to its user: another finds no trace of it', async () => {
    const alice = await h.client('JSONRPC', ALICE);
    const bob = await h.client('JSONRPC', BOB);
    const source = await conversation(alice, ['alice private']);
    const { ref } = await fork(alice, source);
    await assert.rejects(bob.getTask({ tenant: '', id: ref!, historyLength: 0 }), notFound);
    await assert.rejects(send(bob, 'let me in', { taskId: ref }), notFound);
    await assert.rejects(send(bob, '/fork', { taskId: ref }), notFound);
    await assert.rejects(send(bob, '/fork', { taskId: source.id }), notFound);
    const listed = await bob.listTasks({
      tenant: '',
      contextId: '',
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 100,
      pageToken: '',
      historyLength: 0,
      statusTimestampAfter: undefined,
      includeArtifacts: false,
    });
    assert.ok(!listed.tasks.some((task) => task.id === ref));
  });

  it('CMD-37: a resend of /fork is not applied twice: one fork, the same task_ref', async () => {
    const alice = await h.client('HTTP+JSON', ALICE);
    const source = await conversation(alice, ['fork me once']);
    const messageId = randomUUID();
    const first = await fork(alice, source, '', messageId);
    const again = await fork(alice, source, '', messageId);
    assert.equal(again.ref, first.ref);
    const listed = await alice.listTasks({
      tenant: '',
      contextId: '',
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 100,
      pageToken: '',
      historyLength: 0,
      statusTimestampAfter: undefined,
      includeArtifacts: false,
    });
    const forks = listed.tasks.filter((task) => (task.metadata?.[FORKED_FROM_KEY] as any)?.taskId === source.id);
    assert.deepEqual(
      forks.map((task) => task.id),
      [first.ref],
    );
  });
});

describe('/context', () => {
  it('says what the next turn sends, part by part: the parts add up, the tools of the MCP server counted', async () => {
    const alice = await h.client('JSONRPC', ALICE);
    const fresh = await send(alice, '/context');
    const before = dataOf(fresh.status!.message!);
    assert.equal(before.model, 'fixture:small');
    assert.equal(before.parts.systemPrompt, SYSTEM_PROMPT.length);
    assert.equal(before.parts.history, 0, 'a command alone is no conversation');
    assert.ok(before.parts.tools > 0, 'the fixture MCP server’s tool definitions');
    assert.equal(before.tokens, undefined, 'no turn yet');

    const source = await conversation(alice, ['measure this conversation']);
    const replied = await send(alice, '/context', { taskId: source.id });
    const report = dataOf(replied.status!.message!);
    const { parts } = report;
    assert.equal(parts.history, 'measure this conversation'.length + 're: measure this conversation'.length);
    assert.equal(parts.summary, 0);
    assert.equal(parts.instructions, 0);
    assert.equal(parts.tools, before.parts.tools);
    assert.equal(
      report.usedChars,
      parts.systemPrompt + parts.instructions + parts.tools + parts.summary + parts.history,
    );
    assert.ok(report.budgetChars > report.usedChars);
    assert.equal(report.share, Math.min(1, report.usedChars / report.budgetChars));
    const text = textOf(replied.status!.message!);
    assert.match(text, /history: +54 characters/);
    assert.equal(/\[([#.]+)\]/.exec(text)![1]!.length, 20, 'a bar of 20 cells');
  });

  it('shows the provider’s count of the last turn’s input tokens once a turn reported it', async () => {
    const alice = await h.client('GRPC', ALICE);
    const source = await conversation(alice, ['count my tokens please']);
    const report = dataOf((await send(alice, '/context', { taskId: source.id })).status!.message!);
    const request = requestEndingWith('count my tokens please');
    assert.ok(request.stream_options?.include_usage, 'the fixture reported usage');
    assert.equal(report.tokens?.model, 'fixture:small');
    // The fixture counts a request's words as its input tokens.
    const words = request.messages.reduce(
      (sum: number, m: any) => sum + String(m.content).split(/\s+/).filter(Boolean).length,
      0,
    );
    assert.equal(report.tokens?.input, words);
  });
});
