/**
 * The Commands extension mounted on a bare `DefaultRequestHandler` of the SDK, with nothing of
 * the harness but the extension and its port over the SDK's own task store and event buses
 * (`sdkTaskPort`), and as `mountCommandsOnSdk` mounts it (examples/commands-on-sdk.mjs, judged by
 * the conformance kit): what docs/embedding.md promises an embedder.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type StreamResponse, type Task } from '@a2a-js/sdk';
import {
  DefaultExecutionEventBusManager,
  DefaultRequestHandler,
  InMemoryTaskStore,
  ServerCallContext,
  type AgentExecutor,
} from '@a2a-js/sdk/server';
import {
  COMMAND_KEY,
  CommandRegistry,
  CommandsRequestHandler,
  sdkTaskPort,
  withCommandsExtension,
} from '../../src/commands/index.js';
import { baseAgentCard } from '../../src/server/card.js';
import { textPart } from '../../src/wire.js';
import { startedTask, statusUpdate } from '../support/agent-events.js';
import { failedRules, runKit, startServerScript } from '../support/kit-run.js';
import { ROOT } from '../support/processes.js';

/** An agent whose turn works until `release` is called, then waits for input. */
function heldAgent(): { executor: AgentExecutor; started: Promise<void>; release: () => void } {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const startedPromise = new Promise<void>((resolve) => (started = resolve));
  const executor: AgentExecutor = {
    async execute(context, bus) {
      const { taskId, contextId } = context;
      bus.publish(startedTask(context));
      bus.publish(statusUpdate(taskId, contextId, TaskState.TASK_STATE_WORKING));
      started();
      await released;
      const reply: Message = {
        messageId: randomUUID(),
        taskId,
        contextId,
        role: Role.ROLE_AGENT,
        parts: [textPart('done')],
        metadata: {},
        extensions: [],
        referenceTaskIds: [],
      };
      bus.publish(statusUpdate(taskId, contextId, TaskState.TASK_STATE_INPUT_REQUIRED, reply));
    },
    async cancelTask() {},
  };
  return { executor, started: startedPromise, release };
}

function request(text: string, taskId = '') {
  const message: Message = {
    messageId: randomUUID(),
    taskId,
    contextId: '',
    role: Role.ROLE_USER,
    parts: [textPart(text)],
    metadata: {},
    extensions: [],
    referenceTaskIds: [],
  };
  return { tenant: '', message, configuration: undefined, metadata: {} };
}

function mount(executor: AgentExecutor) {
  const registry = new CommandRegistry();
  registry.register({ name: 'ping', description: 'Answers pong', handler: () => ({ text: 'pong' }) });
  const card = baseAgentCard({ httpUrl: 'http://127.0.0.1:1', version: 'test' });
  const taskStore = new InMemoryTaskStore();
  const buses = new DefaultExecutionEventBusManager();
  const sdk = new DefaultRequestHandler(withCommandsExtension(card, registry), taskStore, executor, buses);
  return new CommandsRequestHandler(sdk, { registry, port: sdkTaskPort(taskStore, buses) });
}

const replyText = (task: Task) =>
  task.status?.message?.parts[0]?.content?.$case === 'text' ? task.status.message.parts[0].content.value : undefined;

describe('the extension on a bare DefaultRequestHandler (sdkTaskPort)', () => {
  it('CMD-10, CMD-4: a command without a task starts one waiting for input and answers on it', async () => {
    const handler = mount(heldAgent().executor);
    const answer = (await handler.sendMessage(request('/ping'), new ServerCallContext())) as Task;
    assert.equal(answer.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(replyText(answer), 'pong');
    assert.equal(answer.status?.message?.metadata?.[COMMAND_KEY], 'ping');
  });

  it('issue 33: a command message carrying a push config, on a server that gave no way to store it, is refused, not run with the config dropped', async () => {
    const handler = mount(heldAgent().executor);
    const withConfig = {
      ...request('/ping'),
      configuration: {
        acceptedOutputModes: [],
        taskPushNotificationConfig: {
          tenant: '',
          id: '',
          taskId: '',
          url: 'https://example.com/hook',
          token: '',
          authentication: undefined,
        },
        returnImmediately: false,
      },
    };
    await assert.rejects(
      handler.sendMessage(withConfig, new ServerCallContext()),
      /no push-notification config on a command message/,
    );
  });

  it('CMD-8, CMD-9: a command during a turn answers WORKING at once, and its reply reaches the turn stream before the turn ends', async () => {
    const agent = heldAgent();
    const handler = mount(agent.executor);
    const context = new ServerCallContext();
    const turn = handler.sendMessageStream(request('work'), context);
    const first = await turn.next();
    const taskId =
      (first.value as StreamResponse).payload?.$case === 'task'
        ? ((first.value as StreamResponse).payload!.value as Task).id
        : '';
    assert.ok(taskId);
    const seen: StreamResponse[] = [];
    const rest = (async () => {
      for await (const event of turn) seen.push(event);
    })();
    await agent.started;
    const answer = (await handler.sendMessage(request('/ping', taskId), context)) as Task;
    assert.equal(answer.status?.state, TaskState.TASK_STATE_WORKING, 'the turn still runs (CMD-9)');
    agent.release();
    await rest;
    const states = seen.flatMap((event) => (event.payload?.$case === 'statusUpdate' ? [event.payload.value] : []));
    const replyIndex = states.findIndex((update) => update.status?.message?.metadata?.[COMMAND_KEY] === 'ping');
    assert.ok(replyIndex >= 0, 'the reply reached the turn stream (CMD-8)');
    assert.equal(states.at(-1)?.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, 'and the turn ended after it');
    assert.ok(replyIndex < states.length - 1);
  });
});

describe('mountCommandsOnSdk, judged by the conformance kit', () => {
  it('examples/commands-on-sdk.mjs (/help and /time on a bare SDK agent): every rule the kit checks passes (CMD-6, CMD-8 and CMD-13 included)', async () => {
    const server = await startServerScript('examples/commands-on-sdk.mjs', ROOT);
    try {
      const { code, report } = await runKit('packages/conform/dist/bin.js', server.url, ROOT);
      assert.deepEqual(failedRules(report), [], JSON.stringify(report.results.filter((r) => r.outcome === 'fail')));
      assert.equal(code, 0);
      const passed = new Set(report.results.filter((r) => r.outcome === 'pass').map((r) => r.rule));
      for (const rule of ['CMD-4', 'CMD-6', 'CMD-8', 'CMD-10', 'CMD-13', 'CMD-14', 'CMD-17'])
        assert.ok(passed.has(rule), `${rule} was checked and passed`);
      assert.deepEqual(report.transports, ['JSONRPC', 'HTTP+JSON']);
    } finally {
      await server.stop();
    }
  });
});
