/**
 * A refusal a balancer should retry (the instance drains, or is at its bound on turns) is an
 * HTTP 503 with Retry-After on JSON-RPC too, the JSON-RPC error as its body, on SendMessage and
 * on SendStreamingMessage refused before its stream starts (src/server/unavailable.ts).
 * Every other JSON-RPC error stays a 200. The SDK's JSON-RPC client reads the 503 as the
 * JSON-RPC error, and nginx with `proxy_next_upstream http_503 non_idempotent` sends the
 * request on to another instance, where it succeeds.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { RETRY_AFTER_SECONDS } from '../../src/server/unavailable.js';
import { JSONRPC_PATH } from '../../src/wire.js';
import { needs } from '../needs.js';
import { checkingFetch } from '../support/a2a-http-check.js';
import { NGINX, startNginx, type RunningNginx } from '../support/nginx.js';
import { nextMatching } from '../support/wait.js';
import { assertRetryable, collect, send, sendStream, startTestHarness, textOf, type TestHarness } from './support.js';

const REPLY = 'one two three';
const holds = new Map<string, Promise<void>>();
const letGo: Array<() => void> = [];

function lastUserText(body: any): string {
  const user = [...(body?.messages ?? [])].reverse().find((m: any) => m.role === 'user');
  return typeof user?.content === 'string' ? user.content : JSON.stringify(user?.content ?? '');
}

/** A harness whose model holds its reply to `held` after the first chunk, until the test ends. */
function harnessHolding(held: string, config: Record<string, unknown> = {}): Promise<TestHarness> {
  holds.set(held, new Promise<void>((resolve) => letGo.push(resolve)));
  return startTestHarness({
    config,
    script: {
      reply: REPLY,
      hold: (body) => {
        const until = holds.get(lastUserText(body));
        return until && { afterChunks: 1, until };
      },
    },
  });
}

/** Starts the held turn on `h`; resolves once the model is answering it. */
async function startHeldTurn(h: TestHarness, text: string): Promise<void> {
  const stream = sendStream(await h.client('JSONRPC'), text);
  await nextMatching(
    `the turn "${text}" streaming`,
    stream,
    (e: StreamResponse) => e.payload?.$case === 'artifactUpdate',
  );
  void collect(stream).catch(() => undefined);
}

function jsonRpcMessage(id: string, method: string, text: string) {
  const message = { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] };
  return { jsonrpc: '2.0', id, method, params: { message } };
}

async function postJsonRpc(url: string, body: unknown, accept = 'application/json') {
  const response = await fetch(`${url}${JSONRPC_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept, 'A2A-Version': '1.0' },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    body: (await response.json()) as any,
  };
}

let free: TestHarness;
let atBound: TestHarness;
let draining: TestHarness;
let drained: Promise<void>;

const REFUSALS = [
  {
    name: 'at its bound on turns',
    harness: () => atBound,
    says: /at its limit of 1 running turn\. Send the message again/,
  },
  { name: 'draining', harness: () => draining, says: /shutting down and starts no new turn/ },
];

before(async () => {
  [free, atBound, draining] = await Promise.all([
    startTestHarness({ script: { reply: REPLY } }),
    harnessHolding('held at the bound', { maxTurnsInFlight: 1 }),
    harnessHolding('held while draining', { drainTimeoutMs: 120_000 }),
  ]);
  await startHeldTurn(atBound, 'held at the bound');
  await startHeldTurn(draining, 'held while draining');
  // Drains while its turn is held: new turns are refused until the test lets the turn end.
  drained = draining.harness.close();
});

after(async () => {
  for (const release of letGo) release();
  await drained;
  await Promise.all([free?.close(), atBound?.close(), draining?.close()]);
});

describe('a retryable refusal on JSON-RPC is HTTP 503 with Retry-After, the JSON-RPC error its body', () => {
  for (const refusal of REFUSALS) {
    for (const [method, accept] of [
      ['SendMessage', 'application/json'],
      ['SendStreamingMessage', 'text/event-stream'],
    ] as const) {
      it(`${refusal.name}: ${method} is answered 503, Retry-After ${RETRY_AFTER_SECONDS}, the JSON-RPC error with the request's id`, async () => {
        const id = `refused-${randomUUID()}`;
        const answer = await postJsonRpc(refusal.harness().harness.url, jsonRpcMessage(id, method, 'refused'), accept);
        assert.equal(answer.status, 503);
        assert.equal(answer.retryAfter, String(RETRY_AFTER_SECONDS));
        assert.equal(answer.body.jsonrpc, '2.0');
        assert.equal(answer.body.id, id);
        assert.equal(answer.body.error.code, -32603);
        assert.match(answer.body.error.message, refusal.says);
        assert.deepEqual(
          answer.body.error.data.map((detail: any) => [detail.reason, detail.metadata?.retryAfterSeconds]),
          [['UNAVAILABLE', String(RETRY_AFTER_SECONDS)]],
        );
      });
    }

    it(`${refusal.name}: the SDK's JSON-RPC client reads the 503 as the JSON-RPC error, on SendMessage and SendStreamingMessage`, async () => {
      const client = await refusal.harness().client('JSONRPC');
      const errors: unknown[] = [];
      await send(client, 'refused').then(
        () => assert.fail('accepted'),
        (error) => errors.push(error),
      );
      await sendStream(client, 'refused')
        .next()
        .then(
          () => assert.fail('accepted'),
          (error) => errors.push(error),
        );
      for (const error of errors) {
        assert.match((error as Error).message, refusal.says);
        assertRetryable('JSONRPC', error);
      }
    });
  }

  it('any other JSON-RPC error stays HTTP 200, without Retry-After (a task not found, on the instance at its bound)', async () => {
    const answer = await postJsonRpc(atBound.harness.url, {
      jsonrpc: '2.0',
      id: 7,
      method: 'GetTask',
      params: { id: randomUUID() },
    });
    assert.equal(answer.status, 200);
    assert.equal(answer.retryAfter, null);
    assert.equal(answer.body.id, 7);
    assert.equal(answer.body.error.code, -32001);
  });
});

/** A JSON-RPC client of `card`'s agent that sends through `url` (the proxy) instead of the card's address. */
async function clientThrough(url: string, cardOf: TestHarness): Promise<Client> {
  const fetchImpl = checkingFetch();
  const card = await new DefaultAgentCardResolver({ fetchImpl }).resolve(`${cardOf.harness.url}/`);
  const throughProxy = {
    ...card,
    supportedInterfaces: card.supportedInterfaces
      .filter((i) => i.protocolBinding === 'JSONRPC')
      .map((i) => ({ ...i, url: `${url}${JSONRPC_PATH}` })),
  };
  return new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl })] }).createFromAgentCard(
    throughProxy,
  );
}

describe(
  'through nginx (proxy_next_upstream http_503 non_idempotent), the refused request succeeds on the other instance',
  needs(NGINX),
  () => {
    let nginx: RunningNginx;

    before(async () => {
      const address = (h: TestHarness) => new URL(h.harness.url).host;
      nginx = await startNginx(
        REFUSALS.map((refusal) => ({ primary: address(refusal.harness()), backup: address(free) })),
      );
    });

    after(async () => {
      await nginx?.close();
    });

    REFUSALS.forEach((refusal, index) => {
      it(`the first instance ${refusal.name}: SendMessage and SendStreamingMessage are answered by the other`, async () => {
        const client = await clientThrough(nginx.urls[index]!, refusal.harness());
        const logged = nginx.upstreamStatuses().length;
        const task = await send(client, 'sent through nginx');
        assert.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
        assert.equal(textOf(task.status?.message), REPLY);
        const events = await collect(sendStream(client, 'streamed through nginx'));
        const last = events.at(-1)!.payload!.value as any;
        assert.equal(last.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
        // Each went first to the refusing instance (503), then to the other (200).
        assert.deepEqual(nginx.upstreamStatuses().slice(logged), ['503, 200', '503, 200']);
        const onOther = await (await free.client('JSONRPC')).getTask({ tenant: '', id: task.id, historyLength: 0 });
        assert.equal(onOther.id, task.id);
      });
    });
  },
);
