import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { Client } from '@a2a-js/sdk/client';
import { A2A_ERROR_CODE } from '@a2a-js/sdk/errors';
import { RETRY_AFTER_SECONDS } from '../../src/server/unavailable.js';
import { JSONRPC_PATH, REST_PATH } from '../../src/wire.js';
import { nextMatching, poll } from '../support/wait.js';
import {
  assertRetryable,
  collect,
  send,
  sendStream,
  startTestHarness,
  TRANSPORTS,
  type TestHarness,
  type TransportName,
  userMessage,
} from './support.js';

/**
 * Admission (src/server/admission.ts): a request past `admission.maxRequestsInProgress`, or one
 * that comes while the event loop lags past `admission.maxEventLoopDelayMs`, is refused before
 * it is read, in each transport's retryable form; the probes are answered all the while, on the
 * A2A port and on `metrics.port`.
 */
const MAX = 2;
const holds = new Map<string, () => void>();

function lastUserText(body: any): string {
  const user = [...(body?.messages ?? [])].reverse().find((m: any) => m.role === 'user');
  return typeof user?.content === 'string' ? user.content : JSON.stringify(user?.content ?? '');
}

/** Busy for `ms` on this process's event loop, which the harness under test shares. */
function blockTheLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

interface RawAnswer {
  status: number;
  retryAfter?: string;
  body: any;
}

/** A JSON-RPC `GetTask` of a task that does not exist, through `agent` (false: on a connection of its own). */
function jsonRpcOver(url: string, agent: http.Agent | false): Promise<RawAnswer> {
  const payload = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'GetTask', params: { id: randomUUID() } });
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${url}${JSONRPC_PATH}`,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' } },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode!,
            retryAfter: response.headers['retry-after'],
            body: JSON.parse(text),
          }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

/** A refusal of admission as JSON-RPC sends it: HTTP 503 with Retry-After (its body not read, so id null), -32603 UNAVAILABLE. */
async function assertJsonRpcRefusal(answer: RawAnswer, message: RegExp): Promise<void> {
  assert.equal(answer.status, 503);
  assert.equal(answer.retryAfter, String(RETRY_AFTER_SECONDS));
  const body = answer.body;
  assert.equal(body.id, null);
  assert.equal(body.error.code, A2A_ERROR_CODE.INTERNAL_ERROR);
  assert.deepEqual(
    body.error.data.map((detail: any) => detail.reason),
    ['UNAVAILABLE'],
  );
  assert.match(body.error.message, message);
}

describe(`admission.maxRequestsInProgress: ${MAX} requests held`, () => {
  let h: TestHarness;
  const clients = new Map<TransportName, Client>();
  let held: Array<ReturnType<typeof sendStream>> = [];

  before(async () => {
    h = await startTestHarness({
      config: { admission: { maxRequestsInProgress: MAX, maxEventLoopDelayMs: 0 }, metrics: { port: 0 } },
      script: {
        reply: 'one two three',
        hold: (body) => {
          const text = lastUserText(body);
          if (!text.startsWith('held')) return undefined;
          return { afterChunks: 1, until: new Promise<void>((resolve) => holds.set(text, resolve)) };
        },
      },
    });
    // Each client reads the card when made: made before the places are all taken.
    for (const transport of TRANSPORTS) clients.set(transport, await h.client(transport));
    const jsonRpc = clients.get('JSONRPC')!;
    held = ['held one', 'held two'].map((text) => sendStream(jsonRpc, text));
    for (const stream of held)
      await nextMatching('a held turn streaming', stream, (event) => event.payload?.$case === 'artifactUpdate');
  });

  after(async () => {
    for (const release of holds.values()) release();
    await h?.close();
  });

  for (const transport of TRANSPORTS)
    it(`a request past the bound is refused over ${transport}, retryably and saying why`, async () => {
      const client = clients.get(transport)!;
      const error = await client.getTask({ tenant: '', id: randomUUID(), historyLength: undefined }).then(
        () => assert.fail('a request past the bound was admitted'),
        (refused: unknown) => refused,
      );
      assert.match((error as Error).message, new RegExp(`as many requests as it may \\(${MAX}\\)`));
      assertRetryable(transport, error);
    });

  it('JSON-RPC: HTTP 503 with Retry-After, so that a balancer sees it; HTTP+JSON: 503, UNAVAILABLE', async () => {
    await assertJsonRpcRefusal(await jsonRpcOver(h.harness.url, false), /as many requests as it may/);
    const rest = await fetch(`${h.harness.url}${REST_PATH}/tasks/${randomUUID()}`, {
      headers: { 'A2A-Version': '1.0' },
    });
    assert.equal(rest.status, 503);
    assert.equal(rest.headers.get('retry-after'), String(RETRY_AFTER_SECONDS));
    assert.equal(((await rest.json()) as any).error.status, 'UNAVAILABLE');
  });

  it('/healthz and /readyz are answered while the bound is full, on the A2A port and on metrics.port', async () => {
    const ops = h.harness.metricsUrl!.replace(/\/metrics$/, '');
    for (const base of [h.harness.url, ops]) {
      for (const [path, body] of [
        ['/healthz', { status: 'ok' }],
        ['/readyz', { status: 'ready' }],
      ] as const) {
        const response = await fetch(`${base}${path}`);
        assert.equal(response.status, 200, `${base}${path}`);
        assert.equal(response.headers.get('cache-control'), 'no-store');
        assert.deepEqual(await response.json(), body);
      }
    }
    assert.equal((await fetch(h.harness.metricsUrl!)).status, 200, 'the metrics too');
  });

  it('the refusals are counted by reason: tiny_harness_a2a_refusals_total{reason="requests_at_limit"}', async () => {
    // The tests above were refused 4 times; the text is kept a second, so a scrape may show fewer at first.
    await poll('the refusals counted', async () => {
      const text = await (await fetch(h.harness.metricsUrl!)).text();
      const count = /^tiny_harness_a2a_refusals_total\{reason="requests_at_limit"\} (\d+)$/m.exec(text)?.[1];
      return Number(count) >= 4;
    });
  });

  it('a place is given back when its request ends: a request is admitted again', async () => {
    holds.get('held one')!();
    await collect(held[0]!);
    const client = clients.get('HTTP+JSON')!;
    // The place is given back once the response has closed, just after its last event reached the client.
    const task = await poll('a request admitted once a held one has ended', () =>
      send(client, 'after the bound').catch((error: Error) => {
        if (/as many requests as it may/.test(error.message)) return undefined;
        throw error;
      }),
    );
    assert.equal(task.status?.message?.parts.length, 1);
  });

  for (const transport of TRANSPORTS)
    it(`a place is given back when its client leaves, over ${transport}`, async () => {
      const client = clients.get(transport)!;
      const readTask = () => client.getTask({ tenant: '', id: randomUUID(), historyLength: undefined });
      // One of the two places is held still ('held two'); this stream takes the other.
      const leaving = new AbortController();
      const stream = client.sendMessageStream(
        {
          tenant: '',
          message: userMessage(`held, then left over ${transport}`),
          configuration: undefined,
          metadata: {},
        },
        { signal: leaving.signal },
      );
      await nextMatching('the stream that will leave', stream, (event) => event.payload?.$case === 'artifactUpdate');
      await assert.rejects(readTask(), /as many requests as it may/, 'the bound is full');
      leaving.abort();
      await stream.next().catch(() => undefined);
      await poll('a request admitted once the client has left', () =>
        readTask().then(
          () => assert.fail('no such task'),
          (error: Error) => (/as many requests as it may/.test(error.message) ? undefined : error),
        ),
      );
    });
});

describe('admission.maxEventLoopDelayMs: a lagging event loop', () => {
  let h: TestHarness;
  /** One connection kept alive across requests, as an SDK client keeps its connections. */
  const kept = new http.Agent({ keepAlive: true, maxSockets: 1 });

  before(async () => {
    h = await startTestHarness({ config: { admission: { maxEventLoopDelayMs: 5, eventLoopCheckFrom: 0 } } });
  });

  after(async () => {
    kept.destroy();
    await h?.close();
  });

  it('a request on a new connection while the loop lags is refused, retryably; one on a connection already served is answered; so is /healthz', async () => {
    const served = await jsonRpcOver(h.harness.url, kept);
    assert.equal(served.status, 200, 'served before the loop lags');
    // The harness shares this process's event loop: kept busy, it lags; each try adds lag until one is refused.
    const refused = await poll('a request on a new connection refused while the loop lags', async () => {
      blockTheLoop(300);
      const answer = await jsonRpcOver(h.harness.url, false);
      return answer.status === 503 ? answer : undefined;
    });
    await assertJsonRpcRefusal(refused, /too busy to answer in time/);
    const again = await jsonRpcOver(h.harness.url, kept);
    assert.equal(again.status, 200, 'the client already served is answered');
    assert.equal(again.body.error.code, A2A_ERROR_CODE.TASK_NOT_FOUND, 'its request was handled');
    const healthz = await fetch(`${h.harness.url}/healthz`);
    assert.equal(healthz.status, 200);
  });
});
