/**
 * The command-line clients' A2A 1.1 calls (issue 36): `send --if-generation N` sends the
 * message with `ifGenerationMatch` over the card's 1.1 JSON-RPC interface, and a task that has
 * moved on is told plainly, with its own exit code; following a sub-task waits with
 * `currentGeneration` instead of polling every second. The agent here is a stand-in that answers as the draft says a 1.1 agent does.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { Role, SendMessageResponse, Task, TaskState, type AgentCard } from '@a2a-js/sdk';
import { connect } from '../../src/client/connect.js';
import { SEND_EXIT } from '../../src/client/exit-codes.js';
import { followSubtask } from '../../src/client/subtasks.js';
import { GENERATION_KEY } from '../../src/wire.js';
import { generationsInterface, sendOnGeneration, TaskMovedOn } from '../../src/client/generations-client.js';
import { runSend } from '../../src/client/send.js';
import { baseAgentCard, cardJson } from '../../src/server/card.js';
import { message } from '../store/helpers.js';
import { runCli } from './support.js';

interface Received {
  headers: IncomingHttpHeaders;
  body: { method: string; params: { configuration?: Record<string, unknown>; message?: { taskId?: string } } };
}

let server: Server;
let url: string;
let card: AgentCard;
let answer: 'moved' | 'ok' = 'ok';
const received: Received[] = [];

const task: Task = {
  id: 't-1',
  contextId: 'c-1',
  status: {
    state: TaskState.TASK_STATE_INPUT_REQUIRED,
    message: message('t-1', 'c-1', Role.ROLE_AGENT, 'the reply'),
    timestamp: undefined,
  },
  artifacts: [],
  history: [],
  metadata: {},
};

before(async () => {
  server = createServer((req, res) => {
    if (req.method === 'GET') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(cardJson(card)));
      return;
    }
    let text = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    req.on('end', () => {
      const body = JSON.parse(text) as Received['body'] & { id: string };
      received.push({ headers: req.headers, body });
      res.setHeader('content-type', 'application/json');
      if (body.method !== 'SendMessage') return answerFollow(body, res);
      const reply =
        answer === 'moved'
          ? {
              code: -32010,
              message: 'Task generation mismatch: expected 5 but current generation is 9',
              data: [
                {
                  '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
                  reason: 'TASK_GENERATION_MISMATCH',
                  domain: 'a2a-protocol.org',
                  metadata: { taskId: 't-1', expectedGeneration: '5', currentGeneration: '9' },
                },
              ],
            }
          : undefined;
      const result = SendMessageResponse.toJSON({ payload: { $case: 'task', value: task } });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, ...(reply ? { error: reply } : { result }) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  card = baseAgentCard({ httpUrl: url, version: 'test' });
});

after(() => new Promise<void>((resolve) => server?.close(() => resolve())));

/** A sub-task at generation 4, then 5 (WORKING), then 6, COMPLETED: one GetTask each; no subscription. */
let follows = 0;
function answerFollow(body: Received['body'] & { id: string }, res: import('node:http').ServerResponse): void {
  if (body.method !== 'GetTask') {
    res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, error: { code: -32001, message: 'Task not found' } }));
    return;
  }
  const generation = 4 + follows++;
  const state = generation < 6 ? TaskState.TASK_STATE_WORKING : TaskState.TASK_STATE_COMPLETED;
  const result = Task.toJSON({
    ...task,
    id: 'sub-1',
    status: { ...task.status!, state },
    metadata: { [GENERATION_KEY]: generation },
  });
  res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result }));
}

function request(taskId: string) {
  return {
    tenant: '',
    message: message(taskId, '', Role.ROLE_USER, 'hello'),
    configuration: undefined,
    metadata: {},
  };
}

describe("the command-line clients' A2A 1.1 calls (issue 36)", () => {
  it('sends SendMessage with A2A-Version 1.1 and configuration.ifGenerationMatch to the 1.1 interface', async () => {
    answer = 'ok';
    received.length = 0;
    const result = await sendOnGeneration(card, { authorization: 'Bearer x' }, request('t-1'), 5);
    assert.equal((result as Task).id, 't-1');
    const [{ headers, body }] = received as [Received];
    assert.equal(headers['a2a-version'], '1.1');
    assert.equal(headers.authorization, 'Bearer x');
    assert.equal(body.method, 'SendMessage');
    assert.equal(body.params.configuration?.ifGenerationMatch, '5');
    assert.equal(body.params.message?.taskId, 't-1');
  });

  it('a task that moved on is TaskMovedOn, naming the generation it is at', async () => {
    answer = 'moved';
    await assert.rejects(sendOnGeneration(card, {}, request('t-1'), 5), (error: unknown) => {
      assert.ok(error instanceof TaskMovedOn);
      assert.equal(error.current, 9);
      assert.equal(error.message, 'the task has moved on: generation now 9, not 5; read it again before sending');
      return true;
    });
  });

  it('an agent whose card lists no 1.1 interface is told apart', async () => {
    const older = { ...card, supportedInterfaces: card.supportedInterfaces.filter((i) => i.protocolVersion === '1.0') };
    assert.equal(generationsInterface(older), undefined);
    await assert.rejects(sendOnGeneration(older, {}, request('t-1'), 5), /does not speak A2A 1\.1/);
  });

  it('runSend prints the reply when the generation matches, and exits 7 when the task moved on', async () => {
    const run = async () => {
      const stdout = new PassThrough();
      const stderr = new PassThrough();
      let out = '';
      let err = '';
      stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
      const code = await runSend({
        url,
        text: 'hello',
        headers: [],
        stream: false,
        json: false,
        taskId: 't-1',
        ifGeneration: 5,
        stdout,
        stderr,
      });
      return { code, out, err };
    };
    answer = 'ok';
    const sent = await run();
    assert.equal(sent.code, SEND_EXIT.ok, sent.err);
    assert.equal(sent.out, 'the reply\n');
    answer = 'moved';
    const moved = await run();
    assert.equal(moved.code, SEND_EXIT.moved);
    assert.match(moved.err, /^error: the task has moved on: generation now 9, not 5/m);
  });

  it('following a sub-task, an agent that speaks 1.1 is asked to answer once it moves on (currentGeneration)', async () => {
    received.length = 0;
    follows = 0;
    const connection = await connect(url, [['authorization', 'Bearer y']]);
    const end = await followSubtask(connection, 'sub-1', new AbortController().signal);
    assert.equal(end.kind, 'ended');
    const asked = received.filter(({ body }) => body.method === 'GetTask');
    // Each GetTask waits past the generation the one before it answered with.
    assert.deepEqual(
      asked.map(({ body }) => (body.params as { currentGeneration?: string }).currentGeneration),
      ['0', '4', '5'],
    );
    for (const { headers } of asked) {
      assert.equal(headers['a2a-version'], '1.1');
      assert.equal(headers.authorization, 'Bearer y');
    }
    // Only its end matters: no stream of its reply is held open.
    assert.deepEqual(
      received.map(({ body }) => body.method),
      ['GetTask', 'GetTask', 'GetTask'],
    );
  });

  it('following a sub-task, an agent whose card lists no 1.1 is subscribed to, then polled as 1.0 (issue 36)', async () => {
    const full = card;
    card = {
      ...full,
      supportedInterfaces: full.supportedInterfaces.filter((entry) => entry.protocolVersion !== '1.1'),
    };
    try {
      received.length = 0;
      follows = 1;
      const connection = await connect(url, []);
      const end = await followSubtask(connection, 'sub-1', new AbortController().signal);
      assert.equal(end.kind, 'ended');
      assert.deepEqual(
        received.map(({ body }) => body.method),
        ['SubscribeToTask', 'GetTask', 'GetTask'],
      );
      for (const { headers, body } of received) {
        assert.notEqual(headers['a2a-version'], '1.1');
        assert.equal((body.params as { currentGeneration?: string }).currentGeneration, undefined);
      }
    } finally {
      card = full;
    }
  });

  it('without --task, or with --stream, is bad usage', async () => {
    const alone = await runCli(['send', url, 'hi', '--if-generation', '3']);
    assert.equal(alone.code, SEND_EXIT.usage);
    assert.match(alone.stderr, /--if-generation needs --task/);
    const streamed = await runCli(['send', url, 'hi', '--task', 't-1', '--if-generation', '3', '--stream']);
    assert.equal(streamed.code, SEND_EXIT.usage);
    assert.match(streamed.stderr, /leave out --stream/);
  });
});
