/**
 * The baseline for bench/command-latency.ts: the bare SDK, with nothing of this project in it.
 * A `DefaultRequestHandler` over the SDK's `InMemoryTaskStore`, served by the SDK's express
 * `jsonRpcHandler` on 127.0.0.1, with an executor that answers every message at once with an
 * INPUT_REQUIRED status carrying a short agent message (what a command reply looks like).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import express from 'express';
import { AGENT_CARD_PATH, Role, TaskState, type AgentCard, type Task } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';

const JSONRPC_PATH = '/a2a/jsonrpc';

export interface RunningBareAgent {
  url: string;
  close(): Promise<void>;
}

/**
 * Every execution must start with a task event (the SDK rejects a stream that starts with a
 * status update). A continued task is republished without history, as the harness's executor
 * does: the SDK's result manager then keeps the stored history.
 */
class StatusExecutor implements AgentExecutor {
  async execute(request: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId, userMessage } = request;
    const now = new Date().toISOString();
    const task: Task = request.task
      ? { ...request.task, history: [], artifacts: [], metadata: {} }
      : {
          id: taskId,
          contextId,
          status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now },
          history: [userMessage],
          artifacts: [],
          metadata: {},
        };
    bus.publish(AgentEvent.task(task));
    const reply = {
      messageId: randomUUID(),
      taskId,
      contextId,
      role: Role.ROLE_AGENT,
      parts: [{ content: { $case: 'text' as const, value: 'State: TASK_STATE_INPUT_REQUIRED' }, mediaType: 'text/plain', filename: '', metadata: {} }],
      metadata: {},
      extensions: [],
      referenceTaskIds: [],
    };
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: { state: TaskState.TASK_STATE_INPUT_REQUIRED, message: reply, timestamp: now }, metadata: undefined }));
    bus.finished();
  }

  async cancelTask(taskId: string, bus: ExecutionEventBus): Promise<void> {
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId: '', status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() }, metadata: undefined }));
    bus.finished();
  }
}

function card(httpUrl: string): AgentCard {
  return {
    name: 'bare-sdk-baseline',
    description: 'The SDK with its in-memory task store and a trivial executor.',
    supportedInterfaces: [{ url: `${httpUrl}${JSONRPC_PATH}`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
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

export async function startBareSdkAgent(): Promise<RunningBareAgent> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const handler = new DefaultRequestHandler(card(url), new InMemoryTaskStore(), new StatusExecutor());
  const app = express();
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler }));
  app.use(JSONRPC_PATH, jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  server.on('request', app);
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
