import assert from 'node:assert/strict';
import { generationOf } from '../../src/stream-resume.js';
import { COMMANDS_EXTENSION_URI } from '../../src/wire.js';
/**
 * What the end-to-end tests share: a real harness on 127.0.0.1 port 0 with a fixture model
 * server, SDK clients over each transport, and helpers to build messages and read replies.
 * Everything started here is stopped by `close()`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type Part, type StreamResponse, type Task } from '@a2a-js/sdk';
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  type Client,
} from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import { status as grpcStatus } from '@grpc/grpc-js';
import { A2A_ERROR_CODE } from '@a2a-js/sdk/errors';
import { parseConfig } from '../../src/config/load.js';
import { RETRY_AFTER_SECONDS } from '../../src/server/unavailable.js';
import type { HarnessConfigInput } from '../../src/config/schema.js';
import { startHarness, type HarnessOptions, type RunningHarness } from '../../src/harness.js';
import { startModelServer, type ModelServerScript, type RunningModelServer } from '../fixtures/model-server.js';
import { checkingGrpcInterceptor } from '../support/a2a-grpc-check.js';
import { checkGlobalFetch, checkingFetch } from '../support/a2a-http-check.js';
import { within } from '../support/wait.js';

// The tests that talk to the harness with plain `fetch` are held to A2A 1.0 too.
checkGlobalFetch();

export const TRANSPORTS = ['JSONRPC', 'HTTP+JSON', 'GRPC'] as const;
export type TransportName = (typeof TRANSPORTS)[number];

export interface TestHarness {
  harness: RunningHarness;
  model: RunningModelServer;
  dataDir: string;
  client(transport: TransportName, headers?: Record<string, string>): Promise<Client>;
  /** The chat requests the model server received (not the /models probes). */
  chatRequests(): any[];
  close(): Promise<void>;
}

export interface TestHarnessOptions {
  script?: ModelServerScript;
  /** Config keys over the defaults; a function gets the fixture model server's base URL. */
  config?: HarnessConfigInput | ((modelBaseURL: string) => HarnessConfigInput);
  dataDir?: string;
  harness?: Partial<HarnessOptions>;
  /**
   * Resolve only once every MCP server has answered its first attempt to connect (default:
   * true, so a test's first turn is offered every tool); the harness itself serves at once.
   */
  waitForTools?: boolean;
}

export async function startTestHarness(options: TestHarnessOptions = {}): Promise<TestHarness> {
  const model = await startModelServer(options.script ?? {});
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'tiny-harness-e2e-'));
  const config = parseConfig(
    JSON.stringify({
      defaultModel: 'fixture:small',
      detectOllama: false,
      providers: { fixture: { type: 'openai-compatible', baseURL: model.baseURL, models: ['small', 'large'] } },
      // A test that ends with a turn held would wait out the drain: turns are interrupted at once
      // unless a test of the drain sets its own.
      drainTimeoutMs: 0,
      // Whether the event loop lags depends on the machine's load, and the tests share their loop
      // with the harness: no refusal for it, unless a test of it sets its own (admission.test.ts).
      admission: { maxEventLoopDelayMs: 0 },
      // The tests run in the repository: no instruction file (AGENTS.md) of its own reaches their
      // models, unless a test of the instructions names its files.
      instructions: [],
      ...(typeof options.config === 'function' ? options.config(model.baseURL) : options.config),
    }),
  );
  const harness = await startHarness({
    config,
    dataDir,
    host: '127.0.0.1',
    port: 0,
    grpcPort: 0,
    env: {},
    ...options.harness,
  });
  if (options.waitForTools ?? true)
    await within('the MCP servers answering', harness.toolsAnswered()).catch(async (error: unknown) => {
      await harness.close();
      await model.close();
      throw error;
    });
  const clients: Client[] = [];
  return {
    harness,
    model,
    dataDir,
    async client(transport, headers) {
      const client = await createClient(harness.url, transport, headers);
      clients.push(client);
      return client;
    },
    chatRequests: () => model.requests.filter((r) => r.path.endsWith('/chat/completions')).map((r) => r.body),
    async close() {
      await harness.close();
      await model.close();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * An SDK client of the harness at `url`, preferring `transport`. Every answer and event it
 * receives, the card included, is checked against A2A 1.0 on the wire (`test/support/`): one
 * that breaks the specification fails the call with the field and the rule.
 */
export async function createClient(
  url: string,
  transport: TransportName,
  headers?: Record<string, string>,
): Promise<Client> {
  const fetchImpl = checkingFetch();
  const factory = new ClientFactory({
    transports: [
      new JsonRpcTransportFactory({ fetchImpl }),
      new RestTransportFactory({ fetchImpl }),
      new GrpcTransportFactory({ grpcCallOptions: { interceptors: [checkingGrpcInterceptor] } }),
    ],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    preferredTransports: [transport],
    clientConfig: headers ? { interceptors: [headerInterceptor(headers)] } : undefined,
  });
  return factory.createFromUrl(`${url}/`);
}

function headerInterceptor(headers: Record<string, string>) {
  return {
    async before(args: { options?: { serviceParameters?: Record<string, string> } }) {
      args.options = { ...args.options, serviceParameters: { ...args.options?.serviceParameters, ...headers } };
    },
    async after() {},
  } as any;
}

export function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: {} };
}

export function userMessage(
  text: string,
  ids: { taskId?: string; contextId?: string; messageId?: string } = {},
): Message {
  return {
    messageId: ids.messageId ?? randomUUID(),
    taskId: ids.taskId ?? '',
    contextId: ids.contextId ?? '',
    role: Role.ROLE_USER,
    parts: [textPart(text)],
    metadata: {},
    extensions: [],
    referenceTaskIds: [],
  };
}

/** Sends a blocking message and returns the task it produced. */
export async function send(
  client: Client,
  text: string,
  ids: { taskId?: string; contextId?: string; messageId?: string } = {},
): Promise<Task> {
  const result = await client.sendMessage({
    tenant: '',
    message: userMessage(text, ids),
    configuration: undefined,
    metadata: {},
  });
  if (!('status' in result)) throw new Error('expected a task, got a message');
  return result as Task;
}

/** Sends a streaming message; the stream of its events. */
export function sendStream(
  client: Client,
  text: string,
  ids: { taskId?: string; contextId?: string; messageId?: string } = {},
): AsyncGenerator<StreamResponse, void, undefined> {
  return client.sendMessageStream({
    tenant: '',
    message: userMessage(text, ids),
    configuration: undefined,
    metadata: {},
  });
}

/** Collects a stream's events until it ends (a wait, so a stream that never ends fails the test). */
export async function collect(stream: AsyncGenerator<StreamResponse, void, undefined>): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  await within(
    'the end of the stream',
    (async () => {
      for await (const event of stream) events.push(event);
    })(),
    { seen: () => events.at(-1) },
  );
  return events;
}

export function textOf(message: Message | undefined): string {
  return (message?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
}

export function dataOf(message: Message | undefined): any {
  const part = message?.parts.find((p) => p.content?.$case === 'data');
  return part?.content?.$case === 'data' ? part.content.value : undefined;
}

/** The Commands extension's entry of an agent card as JSON (found by its URI: other extensions may come first). */
export function commandsEntry(card: any): any {
  return card.capabilities.extensions.find((extension: { uri: string }) => extension.uri === COMMANDS_EXTENSION_URI);
}

/** The generation an event carries (spec/stream-resume-extension-v1.md); every event of a task carries one. */
export function generationIn(event: StreamResponse): number {
  const generation = generationOf(event);
  assert.equal(typeof generation, 'number', `every event carries its generation: ${JSON.stringify(event.payload)}`);
  return generation!;
}

/** Asserts that the events' generations are 1, 2, 3, ...: none missing, none twice, in order. */
export function assertDenseFromOne(events: readonly StreamResponse[]): void {
  const generations = events.map(generationIn);
  assert.deepEqual(
    generations,
    generations.map((_, i) => i + 1),
    `dense from 1: ${generations.join(',')}`,
  );
}

/** The retryable form of each transport (spec 3.3.2): JSON-RPC -32603, HTTP 503 with Retry-After, gRPC UNAVAILABLE. */
export function assertRetryable(transport: TransportName, error: any): void {
  switch (transport) {
    case 'JSONRPC':
      assert.equal(error.envelopeCode, A2A_ERROR_CODE.INTERNAL_ERROR);
      assert.deepEqual(
        error.data.map((detail: any) => [detail.reason, detail.metadata?.retryAfterSeconds]),
        [['UNAVAILABLE', String(RETRY_AFTER_SECONDS)]],
      );
      return;
    case 'HTTP+JSON':
      assert.equal(error.statusCode, 503);
      assert.equal(error.headers['retry-after'], String(RETRY_AFTER_SECONDS));
      return;
    case 'GRPC':
      assert.equal(error.status, grpcStatus.UNAVAILABLE);
      return;
  }
}

/** The tasks of a context the client's user can see, newest first (one page of 100, the last 10 messages each). */
export async function tasksInContext(client: Client, contextId: string): Promise<Task[]> {
  const page = await client.listTasks({
    tenant: '',
    contextId,
    status: TaskState.TASK_STATE_UNSPECIFIED,
    pageSize: 100,
    pageToken: '',
    historyLength: 10,
    statusTimestampAfter: undefined,
    includeArtifacts: false,
  });
  return page.tasks;
}
