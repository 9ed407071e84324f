/**
 * The baseline of the benchmarks: the bare SDK, with nothing of this project in it. A
 * `DefaultRequestHandler` over the SDK's `InMemoryTaskStore` (or a store passed in), served by
 * the SDK's express `agentCardHandler` and `jsonRpcHandler` on 127.0.0.1 port 0.
 *
 * Its executor answers a message in one of three ways:
 * - `reply: 'message'`: one `message` event and no task, the SDK's simplest round trip;
 * - `reply: 'status'` (default): a task event, then an INPUT_REQUIRED status carrying a short
 *   agent message (what a command reply of the harness looks like);
 * - with `model`, a message that does not start with `/` runs a turn the way the harness's
 *   executor does: task, WORKING, the conversation sent to an OpenAI-compatible fixture model
 *   with `fetch`, each streamed chunk published as an artifact update, then the final
 *   INPUT_REQUIRED status with the whole reply. Messages starting with `/` get `reply`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import express from 'express';
import { AGENT_CARD_PATH, Role, TaskState, type AgentCard, type Message, type Task } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
  type TaskStore,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { agentMessage } from '../src/runtime/events.js';
import { openSdkSqliteStore } from './lib/sdk-sqlite-store.js';

const JSONRPC_PATH = '/a2a/jsonrpc';

export interface BareAgentOptions {
  /** How a message is answered (every message without `model`, else those starting with `/`). */
  reply?: 'status' | 'message';
  /** A fixture model that ordinary messages run a streamed turn against. */
  model?: { baseURL: string; model: string };
  /** The SDK store to use (default: a new `InMemoryTaskStore`), e.g. to seed it first. */
  taskStore?: TaskStore;
  /** Store tasks in the SDK's `DatabaseTaskStore` on this SQLite file instead (bench/lib/sdk-sqlite-store.ts). */
  sqliteFile?: string;
}

export interface RunningBareAgent {
  url: string;
  taskStore: TaskStore;
  close(): Promise<void>;
}

const STATUS_TEXT = 'State: input required';

function textOf(message: Message): string {
  return message.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
}

/**
 * `fetch`, tried again (twice at most, as the AI SDK does for the harness) when it fails before
 * any answer: a keep-alive connection the fixture closed after a long pause fails that way.
 */
async function fetchWithRetries(url: string, init: RequestInit): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fetch(url, init);
    } catch (error) {
      if (attempt >= 2) throw error;
    }
  }
}

class BareExecutor implements AgentExecutor {
  constructor(private readonly options: BareAgentOptions) {}

  async execute(request: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const isCommand = textOf(request.userMessage).startsWith('/');
    if (this.options.model && !isCommand) return this.turn(request, bus, this.options.model);
    if (this.options.reply === 'message') {
      bus.publish(AgentEvent.message(agentMessage('', request.contextId, STATUS_TEXT)));
      bus.finished();
      return;
    }
    this.openTask(request, bus);
    const now = new Date().toISOString();
    const reply = agentMessage(request.taskId, request.contextId, STATUS_TEXT);
    bus.publish(
      AgentEvent.statusUpdate({
        taskId: request.taskId,
        contextId: request.contextId,
        status: { state: TaskState.TASK_STATE_INPUT_REQUIRED, message: reply, timestamp: now },
        metadata: undefined,
      }),
    );
    bus.finished();
  }

  /**
   * Every execution must start with a task event (the SDK rejects a stream that starts with a
   * status update). A continued task is republished without history, as the harness's executor
   * does: the SDK's result manager then keeps the stored history.
   */
  private openTask(request: RequestContext, bus: ExecutionEventBus): void {
    const { taskId, contextId, userMessage } = request;
    const now = new Date().toISOString();
    const task: Task = request.task
      ? {
          ...request.task,
          history: [],
          artifacts: [],
          metadata: {},
          status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now },
        }
      : {
          id: taskId,
          contextId,
          status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now },
          history: [userMessage],
          artifacts: [],
          metadata: {},
        };
    bus.publish(AgentEvent.task(task));
  }

  /** One model turn, with the harness's sequence of events. */
  private async turn(
    request: RequestContext,
    bus: ExecutionEventBus,
    model: { baseURL: string; model: string },
  ): Promise<void> {
    const { taskId, contextId, userMessage } = request;
    this.openTask(request, bus);
    const status = (state: TaskState, message?: Message) =>
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: { state, message, timestamp: new Date().toISOString() },
        metadata: undefined,
      });
    bus.publish(status(TaskState.TASK_STATE_WORKING));
    const history = request.task?.history ?? [userMessage];
    const conversation = history.some((m) => m.messageId === userMessage.messageId)
      ? history
      : [...history, userMessage];
    const messages = conversation.map((m) => ({
      role: m.role === Role.ROLE_AGENT ? 'assistant' : 'user',
      content: textOf(m),
    }));
    const artifactId = randomUUID();
    let chunks = 0;
    const publish = (value: string, lastChunk: boolean) => {
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: {
            artifactId,
            name: 'response',
            description: `Reply of ${model.model}`,
            parts: value
              ? [{ content: { $case: 'text', value }, mediaType: 'text/plain', filename: '', metadata: {} }]
              : [],
            metadata: {},
            extensions: [],
          },
          append: chunks > 0,
          lastChunk,
          metadata: {},
        }),
      );
      chunks++;
    };
    let reply = '';
    try {
      const response = await fetchWithRetries(`${model.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: model.model, stream: true, messages }),
      });
      if (!response.ok || !response.body) throw new Error(`model answered ${response.status}`);
      const decoder = new TextDecoder();
      let buffer = '';
      const reader = response.body.getReader();
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        buffer += decoder.decode(read.value, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = event.startsWith('data: ') ? event.slice(6) : '';
          if (!data || data === '[DONE]') continue;
          const delta = (JSON.parse(data) as { choices?: Array<{ delta?: { content?: string } }> }).choices?.[0]?.delta
            ?.content;
          if (delta) {
            reply += delta;
            publish(delta, false);
          }
        }
      }
      if (chunks > 0) publish('', true);
    } catch (error) {
      const cause = (error as Error & { cause?: Error }).cause;
      reply = `The model failed: ${(error as Error).message}${cause ? ` (${cause.message})` : ''}`;
    }
    bus.publish(status(TaskState.TASK_STATE_INPUT_REQUIRED, agentMessage(taskId, contextId, reply)));
    bus.finished();
  }

  async cancelTask(taskId: string, bus: ExecutionEventBus): Promise<void> {
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: '',
        status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() },
        metadata: undefined,
      }),
    );
    bus.finished();
  }
}

function card(httpUrl: string): AgentCard {
  return {
    name: 'bare-sdk-baseline',
    description: 'The SDK with its in-memory task store and a trivial executor.',
    supportedInterfaces: [
      { url: `${httpUrl}${JSONRPC_PATH}`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
    ],
    provider: undefined,
    version: '0.0.0',
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
    signatures: [],
  };
}

export async function startBareSdkAgent(
  options: BareAgentOptions = {},
  host = '127.0.0.1',
  port = 0,
): Promise<RunningBareAgent> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const url = `http://${host}:${(server.address() as AddressInfo).port}`;
  const sdkDatabase = options.sqliteFile ? await openSdkSqliteStore(options.sqliteFile) : undefined;
  const taskStore = options.taskStore ?? sdkDatabase?.store ?? new InMemoryTaskStore();
  const handler = new DefaultRequestHandler(card(url), taskStore, new BareExecutor(options));
  const app = express();
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler }));
  app.use(JSONRPC_PATH, jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  server.on('request', app);
  return {
    url,
    taskStore,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }).then(() => sdkDatabase?.close()),
  };
}
