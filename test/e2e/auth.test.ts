/**
 * Bearer-token authentication end to end: refused without a valid token on every transport,
 * the card and page public, and each user seeing only their own tasks (`user-isolation.ts`).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { collect, createClient, send, startTestHarness, TRANSPORTS, type TestHarness, sendStream } from './support.js';
import { describeUserIsolation, ISOLATION_CONFIG, ISOLATION_SCRIPT, list } from './user-isolation.js';

const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdef00';
const WRONG = 'nobody-token-0123456789abcdef';
const as = (token: string) => ({ authorization: `Bearer ${token}` });

let h: TestHarness;

before(async () => {
  h = await startTestHarness({
    script: ISOLATION_SCRIPT,
    config: ISOLATION_CONFIG,
    harness: {
      auth: {
        tokens: new Map([
          [ALICE, 'alice'],
          [BOB, 'bob'],
        ]),
      },
    },
  });
});

after(async () => {
  await h?.close();
});

const refused = (error: any) =>
  /401|unauthenticated|authentication required/i.test(`${error?.message} ${error?.code} ${error?.name}`);

describe('the public parts', () => {
  it('the card is served without a token and declares the bearer scheme', async () => {
    const response = await fetch(`${h.harness.url}/.well-known/agent-card.json`);
    assert.equal(response.status, 200);
    const card = await response.json();
    assert.deepEqual(card.securitySchemes, {
      bearer: {
        httpAuthSecurityScheme: {
          scheme: 'Bearer',
          description: card.securitySchemes.bearer.httpAuthSecurityScheme.description,
        },
      },
    });
    assert.equal(card.securitySchemes.bearer.httpAuthSecurityScheme.scheme, 'Bearer');
    assert.deepEqual(card.securityRequirements, [{ schemes: { bearer: { list: [] } } }]);
  });

  it('the web page is served without a token', async () => {
    const response = await fetch(`${h.harness.url}/`);
    assert.equal(response.status, 200);
  });
});

describe('refused without a valid token', () => {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'SendMessage',
    params: { message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: '/model' }] } },
  });

  for (const [label, headers] of [
    ['no token', {}],
    ['a wrong token', as(WRONG)],
    ['another scheme', { authorization: `Basic ${ALICE}` }],
  ] as const) {
    it(`JSON-RPC with ${label}: 401, WWW-Authenticate: Bearer, a JSON-RPC error`, async () => {
      const response = await fetch(`${h.harness.url}/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...headers },
        body,
      });
      assert.equal(response.status, 401);
      assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer\b/);
      const json = await response.json();
      assert.equal(json.jsonrpc, '2.0');
      assert.equal(typeof json.error.code, 'number');
      assert.match(json.error.message, /Authorization: Bearer/);
      assert.doesNotMatch(JSON.stringify(json), /stack|at .*\.js/);
    });

    it(`HTTP+JSON with ${label}: 401 JSON`, async () => {
      const response = await fetch(`${h.harness.url}/a2a/rest/tasks/some-task`, {
        headers: { 'a2a-version': '1.0', ...headers },
      });
      assert.equal(response.status, 401);
      assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer\b/);
      assert.equal((await response.json()).error.status, 'UNAUTHENTICATED');
    });
  }

  for (const transport of TRANSPORTS) {
    it(`the SDK client over ${transport}, with no token and with a wrong one`, async () => {
      for (const headers of [undefined, as(WRONG)]) {
        const client = await createClient(h.harness.url, transport, headers);
        await assert.rejects(send(client, '/model'), refused);
        await assert.rejects(list(client), refused);
        await assert.rejects(collect(sendStream(client, 'hi')), refused);
      }
    });
  }

  it('gRPC answers UNAUTHENTICATED (code 16), unary and streaming', async () => {
    const client = await createClient(h.harness.url, 'GRPC', as(WRONG));
    await assert.rejects(send(client, 'hi'), (error: any) =>
      /UNAUTHENTICATED|\b16\b/.test(`${error?.code} ${error?.message} ${error?.cause?.code}`),
    );
    await assert.rejects(collect(client.resubscribeTask({ tenant: '', id: 'x' })), (error: any) =>
      /UNAUTHENTICATED|\b16\b/.test(`${error?.code} ${error?.message} ${error?.cause?.code}`),
    );
  });
});

for (const transport of TRANSPORTS) {
  describeUserIsolation('tokens file', transport, () => ({ h, alice: as(ALICE), bob: as(BOB) }));
}
