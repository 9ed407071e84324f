import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState } from '@a2a-js/sdk';
import { COMMANDS_EXTENSION_URI, CommandUsageError } from '../../src/commands/index.js';
import { CARD_MAX_AGE_S } from '../../src/server/card-route.js';
import {
  collect,
  dataOf,
  send,
  startTestHarness,
  textOf,
  TRANSPORTS,
  userMessage,
  type TestHarness,
  sendStream,
  commandsEntry,
} from './support.js';

let h: TestHarness;
let countedRuns = 0;

before(async () => {
  h = await startTestHarness({
    script: { reply: 'The fixture model answers.' },
    harness: {
      commands: (registry) => {
        registry.register({
          name: 'explode',
          description: 'Always fails',
          handler: () => {
            throw new Error('boom at /home/someone/secret/file.ts with OPENAI_API_KEY=sk-abcdefghijklmnop');
          },
        });
        registry.register({
          name: 'strict',
          description: 'Wants one word',
          argumentHint: '<word>',
          handler: ({ args }) => {
            if (!/^\w+$/.test(args)) throw new CommandUsageError('Give exactly one word, e.g. /strict hello.');
            return { text: `ok ${args}` };
          },
        });
        registry.register({
          name: 'count',
          description: 'Counts its runs',
          handler: () => ({ text: `run ${++countedRuns}` }),
        });
      },
    },
  });
});

after(async () => {
  await h?.close();
});

for (const transport of TRANSPORTS) {
  describe(`commands over ${transport}`, () => {
    it('CMD-4, CMD-5, CMD-8: blocking SendMessage returns the task whose status message is the reply', async () => {
      const client = await h.client(transport);
      const task = await send(client, 'Hello there');
      assert.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      const replied = await send(client, '/status', { taskId: task.id, contextId: task.contextId });
      assert.equal(replied.id, task.id);
      assert.equal(replied.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      const reply = replied.status?.message;
      assert.ok(reply, 'the status carries the reply');
      assert.deepEqual(reply.metadata, { command: 'status' });
      assert.deepEqual(reply.extensions, [COMMANDS_EXTENSION_URI]);
      assert.deepEqual(reply.referenceTaskIds, []);
      assert.equal(reply.parts[0]?.content?.$case, 'text');
      assert.match(textOf(reply), /State: input required/);
      assert.equal(dataOf(reply).state, 'TASK_STATE_INPUT_REQUIRED', 'the data part follows the text');
    });

    it('CMD-8: SendStreamingMessage yields the task, then the reply status update, then closes', async () => {
      const client = await h.client(transport);
      const task = await send(client, 'Start');
      const events = await collect(sendStream(client, '/help model', { taskId: task.id }));
      assert.deepEqual(
        events.map((e) => e.payload?.$case),
        ['task', 'statusUpdate'],
      );
      const update = events[1]!.payload!.value as any;
      assert.equal(update.taskId, task.id);
      assert.deepEqual(update.metadata, { command: 'help' });
      assert.equal(update.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      assert.match(textOf(update.status.message), /\/model \[<model>\]/);
    });

    it('CMD-6: the task keeps its state and its metadata gains no command keys', async () => {
      const client = await h.client(transport);
      const task = await send(client, 'Hi');
      await send(client, '/status', { taskId: task.id });
      await send(client, '/help', { taskId: task.id });
      const stored = await client.getTask({ tenant: '', id: task.id, historyLength: undefined });
      assert.equal(stored.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      assert.ok(!('command' in (stored.metadata ?? {})), JSON.stringify(stored.metadata));
      assert.ok(!('task_ref' in (stored.metadata ?? {})));
      assert.equal(stored.history.at(-1)?.metadata?.command, 'help', 'the reply is kept in history');
    });

    it('CMD-10: a command without a task creates one waiting for input, and the model follows', async () => {
      const client = await h.client(transport);
      const created = await send(client, '/model builtin:echo');
      assert.equal(created.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      assert.ok(created.id && created.contextId);
      assert.match(textOf(created.status?.message), /now uses builtin:echo/);
      const before = h.chatRequests().length;
      const answered = await send(client, 'What are you?', { taskId: created.id });
      assert.match(textOf(answered.status?.message), /built-in/i);
      assert.equal(h.chatRequests().length, before, 'the fixture model was not asked');
    });

    it('CMD-10: a command with only a contextId creates its task in that context', async () => {
      const client = await h.client(transport);
      const contextId = crypto.randomUUID();
      const created = await send(client, '/help', { contextId });
      assert.equal(created.contextId, contextId);
    });

    it('CMD-11: a command to a finished task is refused like any message, and nothing changes', async () => {
      const client = await h.client(transport);
      const task = await send(client, 'Soon canceled');
      await client.cancelTask({ tenant: '', id: task.id, metadata: {} });
      await assert.rejects(send(client, '/status', { taskId: task.id }), (error: Error) =>
        /terminal state/.test(error.message),
      );
      const stored = await client.getTask({ tenant: '', id: task.id, historyLength: undefined });
      assert.equal(stored.status?.state, TaskState.TASK_STATE_CANCELED);
      assert.ok(!stored.history.some((m) => m.metadata?.command === 'status'));
    });

    it('CMD-12: a failing command replies with what went wrong, no stack, path or secret, and the server keeps serving', async () => {
      const client = await h.client(transport);
      const task = await send(client, 'Hi');
      const failed = await send(client, '/explode', { taskId: task.id });
      const text = textOf(failed.status?.message);
      assert.match(text, /\/explode failed/);
      assert.doesNotMatch(text, /home|secret|sk-|at |\.ts/);
      assert.equal(failed.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      const usage = await send(client, '/strict two words', { taskId: task.id });
      assert.equal(textOf(usage.status?.message), 'Give exactly one word, e.g. /strict hello.');
      const unknown = await send(client, '/model nosuch:model', { taskId: task.id });
      assert.match(textOf(unknown.status?.message), /Unknown model "nosuch:model".*\n.*fixture:small/s);
      assert.equal(dataOf(unknown.status?.message).current, 'fixture:small');
      const fine = await send(client, '/strict hello', { taskId: task.id });
      assert.equal(textOf(fine.status?.message), 'ok hello');
    });

    it('CMD-13: a command resent with the same messageId is answered again, not run again', async () => {
      const client = await h.client(transport);
      const task = await send(client, 'Hi');
      const messageId = crypto.randomUUID();
      const first = await send(client, '/count', { taskId: task.id, messageId });
      const runs = countedRuns;
      const again = await send(client, '/count', { taskId: task.id, messageId });
      assert.equal(countedRuns, runs, 'the handler did not run again');
      assert.equal(again.status?.message?.messageId, first.status?.message?.messageId);
      assert.equal(textOf(again.status?.message), textOf(first.status?.message));
      const stored = await client.getTask({ tenant: '', id: task.id, historyLength: undefined });
      assert.equal(stored.history.filter((m) => m.metadata?.command === 'count' && m.role === 2).length, 1);
    });

    it('CMD-2, CMD-3, CMD-7: ordinary messages that look like commands reach the model unchanged; commands never do', async () => {
      const client = await h.client(transport);
      const task = await send(client, '/nosuch thing');
      await send(client, '/status', { taskId: task.id });
      const two = userMessage('/status');
      two.parts.push({
        content: { $case: 'text', value: 'and more' },
        mediaType: 'text/plain',
        filename: '',
        metadata: {},
      });
      two.taskId = task.id;
      await client.sendMessage({ tenant: '', message: two, configuration: undefined, metadata: {} });
      const last = h.chatRequests().at(-1);
      const sent = last.messages.map((m: any) => m.content).join('\n');
      assert.match(sent, /\/nosuch thing/);
      assert.match(sent, /\/status\nand more/);
      assert.doesNotMatch(sent, /Turn running:/, 'no command reply reached the model');
      const contents = last.messages.map((m: any) => m.content);
      assert.ok(!contents.includes('/status'), 'the command message did not reach the model');
    });
  });
}

describe('commands on the card', () => {
  it('CMD-14: the served card lists the commands in registration order, built-ins first', async () => {
    const card = await (await fetch(`${h.harness.url}/.well-known/agent-card.json`)).json();
    const entries = card.capabilities.extensions.filter((e: any) => e.uri === COMMANDS_EXTENSION_URI);
    assert.equal(entries.length, 1);
    assert.equal(entries[0].required, false);
    assert.deepEqual(
      entries[0].params.commands.map((c: any) => c.name),
      [
        'help',
        'model',
        'status',
        'stop',
        'spawn',
        'compact',
        'rewind',
        'fork',
        'context',
        'memory',
        'schedule',
        'unschedule',
        'skills',
        'agents',
        'explode',
        'strict',
        'count',
      ],
    );
    assert.deepEqual(entries[0].params.commands[1], {
      name: 'model',
      description: "Show or choose this task's model",
      argument_hint: '[<model>]',
    });
    // Each binding once per version spoken, 1.0 first (issue 36).
    assert.deepEqual(
      card.supportedInterfaces.map((i: any) => `${i.protocolBinding} ${i.protocolVersion}`),
      ['JSONRPC 1.0', 'HTTP+JSON 1.0', 'GRPC 1.0', 'JSONRPC 1.1', 'HTTP+JSON 1.1', 'GRPC 1.1'],
    );
    assert.equal(card.capabilities.streaming, true);
  });

  it('CMD-16: a command registered while the server runs is on the next card, which is cached for seconds only (A2A §8.6.1: max-age, ETag, Last-Modified)', async () => {
    h.harness.registry.register({ name: 'late', description: 'Registered late', handler: () => ({ text: 'late' }) });
    try {
      const response = await fetch(`${h.harness.url}/.well-known/agent-card.json`);
      assert.equal(response.headers.get('cache-control'), `max-age=${CARD_MAX_AGE_S}`);
      assert.ok(CARD_MAX_AGE_S <= 10, 'within seconds');
      assert.ok(response.headers.get('etag'));
      assert.ok(Date.parse(response.headers.get('last-modified') ?? '') > 0, 'an HTTP date');
      const card = await response.json();
      const names = commandsEntry(card).params.commands.map((c: any) => c.name);
      assert.ok(names.includes('late'));
    } finally {
      h.harness.registry.unregister('late');
    }
    const card = await (await fetch(`${h.harness.url}/.well-known/agent-card.json`)).json();
    assert.ok(!commandsEntry(card).params.commands.some((c: any) => c.name === 'late'));
  });
});
