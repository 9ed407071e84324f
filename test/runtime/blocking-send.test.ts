import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type SendMessageRequest, type Task } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor } from '@a2a-js/sdk/server';
import { A2AError } from '@a2a-js/sdk/errors';
import { DEFAULT_ANSWER_HISTORY } from '../../src/commands/index.js';
import { BlockingSendAsStream } from '../../src/runtime/blocking-send.js';
import { callContext, message, textPart } from '../store/helpers.js';
import { artifactUpdate, startedTask, statusUpdate } from '../support/agent-events.js';

/**
 * The workaround for the SDK's blocking SendMessage (which deep-copies the task after every
 * event): a blocking send is run as a stream and answered with the stored task. Pinned here
 * against the SDK's own blocking path on the same executor, so that clients see no difference.
 */

const card = {
  name: 't',
  description: 't',
  version: '1',
  capabilities: { streaming: true, pushNotifications: false, extensions: [] },
} as never;

/** An agent that streams three chunks into an artifact, then waits for input; `hello` gets a bare message. */
const executor: AgentExecutor = {
  async execute(context, bus) {
    const { taskId, contextId, userMessage } = context;
    const text = userMessage.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
    if (text === 'hello') {
      bus.publish(AgentEvent.message(message('', contextId, Role.ROLE_AGENT, 'hi')));
      bus.finished();
      return;
    }
    const now = new Date().toISOString();
    bus.publish(startedTask(context, { timestamp: now }));
    const artifactId = randomUUID();
    ['one ', 'two ', 'three'].forEach((chunk, i) =>
      bus.publish(
        artifactUpdate(taskId, contextId, [textPart(chunk)], { artifactId, append: i > 0, lastChunk: i === 2 }),
      ),
    );
    const reply = message(taskId, contextId, Role.ROLE_AGENT, `reply to ${text}`);
    bus.publish(statusUpdate(taskId, contextId, TaskState.TASK_STATE_INPUT_REQUIRED, reply, now));
    bus.finished();
  },
  async cancelTask() {},
};

function send(
  text: string,
  options: { taskId?: string; contextId?: string; historyLength?: number; returnImmediately?: boolean } = {},
): SendMessageRequest {
  const msg: Message = message(options.taskId ?? '', options.contextId ?? '', Role.ROLE_USER, text);
  return {
    tenant: '',
    message: msg,
    configuration: {
      acceptedOutputModes: [],
      historyLength: options.historyLength,
      returnImmediately: options.returnImmediately ?? false,
      taskPushNotificationConfig: undefined,
    },
    metadata: {},
  } as SendMessageRequest;
}

/** What a client can compare: everything but ids and timestamps. */
function shape(task: Task) {
  return {
    state: task.status?.state,
    statusText: task.status?.message?.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join(''),
    history: task.history.map((m) => [
      m.role,
      m.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join(''),
    ]),
    artifacts: task.artifacts.map((a) =>
      a.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join(''),
    ),
  };
}

async function conversation(handler: { sendMessage: DefaultRequestHandler['sendMessage'] }, historyLength?: number) {
  const context = callContext();
  const first = (await handler.sendMessage(send('first'), context)) as Task;
  const second = (await handler.sendMessage(
    send('second', { taskId: first.id, contextId: first.contextId, historyLength }),
    context,
  )) as Task;
  return { first: shape(first), second: shape(second) };
}

describe('BlockingSendAsStream (a blocking send run as a stream)', () => {
  for (const historyLength of [undefined, 1, 0, 10]) {
    it(`answers a blocking send as the SDK's own blocking path does, but for the history's default (historyLength ${historyLength ?? 'unset'})`, async () => {
      const sdk = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
      const ours = new BlockingSendAsStream(
        new DefaultRequestHandler(card, new InMemoryTaskStore(), executor),
        () => {},
      );
      const expected = await conversation(sdk, historyLength);
      const actual = await conversation(ours, historyLength);
      if (historyLength === undefined) {
        // Unset, the SDK returns the whole history; the harness the message sent and the reply.
        assert.equal(expected.second.history.length, 4);
        expected.first.history = expected.first.history.slice(-DEFAULT_ANSWER_HISTORY);
        expected.second.history = expected.second.history.slice(-DEFAULT_ANSWER_HISTORY);
      }
      assert.deepEqual(actual, expected);
      assert.equal(actual.second.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      assert.deepEqual(actual.second.artifacts.at(-1), 'one two three');
    });
  }

  it('never takes the SDK blocking path, for a blocking send or one with returnImmediately', async () => {
    const inner = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
    const calls: string[] = [];
    const original = inner.sendMessage.bind(inner);
    inner.sendMessage = (params, context) => {
      calls.push(params.configuration?.returnImmediately ? 'immediate' : 'blocking');
      return original(params, context);
    };
    const handler = new BlockingSendAsStream(inner, () => {});
    const done = (await handler.sendMessage(send('first'), callContext())) as Task;
    assert.equal(done.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const early = (await handler.sendMessage(
      send('second', { taskId: done.id, contextId: done.contextId, returnImmediately: true }),
      callContext(),
    )) as Task;
    assert.equal(early.id, done.id);
    assert.deepEqual(calls, []);
  });

  it('answers with the message when the agent answers with one', async () => {
    const handler = new BlockingSendAsStream(
      new DefaultRequestHandler(card, new InMemoryTaskStore(), executor),
      () => {},
    );
    const reply = (await handler.sendMessage(send('hello'), callContext())) as Message;
    assert.equal(reply.parts[0]?.content?.$case === 'text' && reply.parts[0].content.value, 'hi');
  });

  it('fails with the SDK words when the agent publishes nothing', async () => {
    const silent: AgentExecutor = { execute: async (_context, bus) => bus.finished(), cancelTask: async () => {} };
    const handler = new BlockingSendAsStream(
      new DefaultRequestHandler(card, new InMemoryTaskStore(), silent),
      () => {},
    );
    await assert.rejects(
      handler.sendMessage(send('x'), callContext()),
      (error: unknown) => error instanceof A2AError && /without a result/.test(error.message),
    );
  });
});
