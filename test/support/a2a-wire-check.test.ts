import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Server as HttpServer } from 'node:http';
import express from 'express';
import { Server as GrpcServer, ServerCredentials, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { AGENT_CARD_PATH, TaskState, type AgentCard } from '@a2a-js/sdk';
import { DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { A2AService, grpcService } from '@a2a-js/sdk/server/grpc';
import { collect, createClient, TRANSPORTS, userMessage } from '../e2e/support.js';
import { forgetViolations, seenViolations } from './a2a-violations.js';
import { artifactUpdate, startedTask, statusUpdate } from './agent-events.js';
import { textPart } from '../../src/wire.js';

/**
 * The checks hooked into the end-to-end tests' clients, against an agent on the bare SDK that
 * answers `bad` with the fault the harness once had (a closing artifact update whose artifact
 * has no parts) and anything else correctly: on every transport, the bad answer must fail the
 * call that received it, naming the field, and the good one must pass untouched.
 */

const executor: AgentExecutor = {
  async execute(context, bus) {
    const { taskId, contextId, userMessage: message } = context;
    const text = message.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
    const now = new Date().toISOString();
    bus.publish(startedTask(context, { state: TaskState.TASK_STATE_WORKING, history: 'always', timestamp: now }));
    const parts = text === 'bad' ? [] : [textPart('fine')];
    bus.publish(artifactUpdate(taskId, contextId, parts, { artifactId: 'a-1', name: 'reply' }));
    bus.publish(statusUpdate(taskId, contextId, TaskState.TASK_STATE_COMPLETED, undefined, now));
  },
  async cancelTask() {},
};

let url = '';
let http: HttpServer;
let grpc: GrpcServer;

before(async () => {
  const app = express();
  http = await new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(server));
  });
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  grpc = new GrpcServer();
  const card: AgentCard = {
    name: 'faulty',
    description: 'An agent that breaks A2A 1.0 on request',
    supportedInterfaces: [],
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'echo',
        name: 'Echo',
        description: 'Answers',
        tags: ['test'],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  grpc.addService(
    A2AService,
    grpcService({
      requestHandler: handler,
      userBuilder: async () => ({ isAuthenticated: false, userName: '' }),
    }) as unknown as UntypedServiceImplementation,
  );
  const grpcPort = await new Promise<number>((resolve, reject) =>
    grpc.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, port) =>
      error ? reject(error) : resolve(port),
    ),
  );
  card.supportedInterfaces.push(
    { url: `${url}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
    { url: `${url}/a2a/rest`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' },
    { url: `127.0.0.1:${grpcPort}`, protocolBinding: 'GRPC', tenant: '', protocolVersion: '1.0' },
  );
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler }));
  app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  app.use('/a2a/rest', restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
});

after(async () => {
  grpc.forceShutdown();
  http.closeAllConnections();
  await new Promise((resolve) => http.close(resolve));
});

// The bad answers here are provoked: what they recorded must not fail this file at exit.
afterEach(() => forgetViolations());

const send = (text: string) => ({ tenant: '', message: userMessage(text), configuration: undefined, metadata: {} });

for (const transport of TRANSPORTS) {
  describe(`the A2A 1.0 checks of the test clients over ${transport}`, () => {
    it('a stream event whose artifact has no parts fails the stream, naming the field', async () => {
      const client = await createClient(url, transport);
      await assert.rejects(
        collect(client.sendMessageStream(send('bad'))),
        /event 2\.artifactUpdate\.artifact\.parts: is REQUIRED and must hold at least one element/,
      );
      assert.ok(
        seenViolations().some((problem) => problem.includes('artifactUpdate.artifact.parts')),
        'the violation is recorded too',
      );
    });

    it('an answer holding such an artifact fails the call, naming the field', async () => {
      const client = await createClient(url, transport);
      await assert.rejects(client.sendMessage(send('bad')), /task\.artifacts\[0\]\.parts: is REQUIRED/);
    });

    it('valid answers and events pass unchanged', async () => {
      const client = await createClient(url, transport);
      const events = await collect(client.sendMessageStream(send('good')));
      assert.deepEqual(
        events.map((event) => event.payload?.$case),
        ['task', 'artifactUpdate', 'statusUpdate'],
      );
      const answer = await client.sendMessage(send('good'));
      assert.ok('status' in answer && answer.artifacts[0]?.parts.length === 1);
      assert.deepEqual(seenViolations(), []);
    });
  });
}
