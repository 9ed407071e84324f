/**
 * A bare A2A agent on the SDK alone, for the client tests: no Commands extension on its card,
 * every request's headers recorded. It echoes a message back (an artifact, then COMPLETED with
 * the same text as the status message), and a message that is exactly `fail` ends FAILED. Its
 * card declares no while-busy extension; a message that is exactly `hold` waits for `options.hold`.
 * `delegate <task-id> <state>...` sends, before its echo, one sub-task note per state for that
 * task, as the harness's `delegate` tool does for a sub-agent named `reviewer`.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { AGENT_CARD_PATH, TaskState, type AgentCard } from '@a2a-js/sdk';
import { DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { agentMessage } from '../../src/runtime/events.js';
import { SUBTASK_NOTE_KEY, textPart } from '../../src/wire.js';
import { bundledWebDir, webPage } from '../../src/server/web-page.js';
import { artifactUpdate, startedTask, statusUpdate } from '../support/agent-events.js';

export interface BareAgent {
  url: string;
  /** Every request received: path and headers (lower-case names). */
  requests: Array<{ path: string; headers: Record<string, string | string[] | undefined> }>;
  close(): Promise<void>;
}

const executorFor = (hold: Promise<void>): AgentExecutor => ({
  async execute(context, bus) {
    const { taskId, contextId, userMessage } = context;
    const text = userMessage.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
    bus.publish(startedTask(context, { history: 'always' }));
    if (text === 'fail') {
      const failure = agentMessage(taskId, contextId, 'it failed on purpose');
      bus.publish(statusUpdate(taskId, contextId, TaskState.TASK_STATE_FAILED, failure));
      return;
    }
    if (text === 'hold') await hold;
    const [word, subtask, ...states] = text.split(' ');
    for (const state of word === 'delegate' ? states : []) {
      const note = agentMessage(taskId, contextId, `sub-task ${subtask}: ${state}`);
      note.metadata = { [SUBTASK_NOTE_KEY]: { id: subtask, state, agent: 'reviewer' } };
      note.referenceTaskIds = [subtask!];
      bus.publish(statusUpdate(taskId, contextId, TaskState.TASK_STATE_WORKING, note));
    }
    const reply = `echo: ${text}`;
    bus.publish(artifactUpdate(taskId, contextId, [textPart(reply)], { name: 'reply' }));
    bus.publish(
      statusUpdate(taskId, contextId, TaskState.TASK_STATE_COMPLETED, agentMessage(taskId, contextId, reply)),
    );
  },
  async cancelTask() {},
});

/** `page`: serve the harness's built chat page at `/` too (dist/web), for the page's tests against another agent. */
export async function startBareAgent(options: { hold?: Promise<void>; page?: boolean } = {}): Promise<BareAgent> {
  const requests: BareAgent['requests'] = [];
  const app = express();
  app.use((req, _res, next) => {
    requests.push({ path: req.path, headers: { ...req.headers } });
    next();
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const card: AgentCard = {
    name: 'bare-agent',
    description: 'An agent without the Commands extension',
    supportedInterfaces: [
      { url: `${url}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
      { url: `${url}/a2a/rest`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' },
    ],
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
    signatures: [],
  };
  const handler = new DefaultRequestHandler(
    card,
    new InMemoryTaskStore(),
    executorFor(options.hold ?? Promise.resolve()),
  );
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler }));
  app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  app.use('/a2a/rest', restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  if (options.page) app.use(webPage(bundledWebDir()));
  return {
    url,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
