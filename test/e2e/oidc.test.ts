/**
 * Issue 38, OpenID Connect end to end: a harness checking tokens of a test issuer on loopback
 * (with a tenant claim, required scopes, and a tokens file beside it). Every refusal on the three
 * transports; the card's schemes; the probes untouched; a key rotated while serving; and two
 * users of one tenant, and of two, seeing nothing of each other's, on SQLite and PostgreSQL.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { needs } from '../needs.js';
import { POSTGRES, tempSchema, type TempSchema } from '../support/postgres.js';
import { startTestIssuer, TEST_AUDIENCE, type TestIssuer, type TokenOptions } from '../fixtures/oidc-issuer.js';
import { collect, createClient, send, sendStream, startTestHarness, TRANSPORTS, type TestHarness } from './support.js';
import { describeUserIsolation, ISOLATION_SCRIPT, list, type TwoUsers } from './user-isolation.js';

const FILE_TOKEN = 'file-token-0123456789abcdef';
const as = (token: string) => ({ authorization: `Bearer ${token}` });

let issuer: TestIssuer;
let h: TestHarness;

/** Alice and bob of acme; carol of acme and carol of globex (the same `sub`). */
const users: Record<string, Record<string, string>> = {};

function oidcConfig() {
  return {
    push: { allowPrivateNetworks: true },
    auth: {
      oidc: {
        issuer: issuer.issuer,
        audience: TEST_AUDIENCE,
        tenantClaim: 'org',
        requiredScopes: ['agent'],
        methodScopes: { SendMessage: ['agent.write'], SendStreamingMessage: ['agent.write'] },
        // Every unknown key id may read the keys again: the rotation below needs no wait.
        keysRefetchIntervalMs: 0,
      },
    },
  };
}

async function tokenOf(sub: string, org: string, options: TokenOptions = {}) {
  return issuer.token(sub, { ...options, claims: { org, scope: 'openid agent agent.write', ...options.claims } });
}

async function harness(databaseUrl?: string): Promise<TestHarness> {
  return startTestHarness({
    script: ISOLATION_SCRIPT,
    config: oidcConfig(),
    harness: { auth: { tokens: new Map([[FILE_TOKEN, 'filer']]) }, ...(databaseUrl && { databaseUrl }) },
  });
}

before(async () => {
  issuer = await startTestIssuer();
  h = await harness();
  users.alice = as(await tokenOf('alice', 'acme'));
  users.bob = as(await tokenOf('bob', 'acme'));
  users.carolAcme = as(await tokenOf('carol', 'acme'));
  users.carolGlobex = as(await tokenOf('carol', 'globex'));
});

after(async () => {
  await h?.close();
  await issuer?.close();
});

describe('issue 38: the card and the public routes', () => {
  it('issue 38: the card declares openIdConnect with the discovery URL and the bearer scheme of the tokens file, either one enough', async () => {
    const card = await (await fetch(`${h.harness.url}/.well-known/agent-card.json`)).json();
    assert.deepEqual(card.securitySchemes.oidc, {
      openIdConnectSecurityScheme: {
        openIdConnectUrl: `${issuer.issuer}/.well-known/openid-configuration`,
        description: card.securitySchemes.oidc.openIdConnectSecurityScheme.description,
      },
    });
    assert.equal(card.securitySchemes.bearer.httpAuthSecurityScheme.scheme, 'Bearer');
    assert.deepEqual(card.securityRequirements, [
      { schemes: { oidc: { list: ['agent'] } } },
      { schemes: { bearer: { list: [] } } },
    ]);
  });

  it('issue 38: /healthz, /readyz and /metrics stay as they are, without a token', async () => {
    for (const path of ['/healthz', '/readyz', '/metrics'])
      assert.equal((await fetch(`${h.harness.url}${path}`)).status, 200, path);
  });
});

/** Each refusal: the token, the status, RFC 6750's error and what the description says. */
const REFUSALS: [string, () => Promise<string>, number, string, RegExp][] = [
  ['an expired token', () => tokenOf('alice', 'acme', { expiresIn: -3600 }), 401, 'invalid_token', /expired/],
  [
    'a token for another audience',
    () => tokenOf('alice', 'acme', { claims: { aud: 'another-app' } }),
    401,
    'invalid_token',
    /another audience/,
  ],
  [
    'a token from another issuer',
    () => tokenOf('alice', 'acme', { claims: { iss: 'https://elsewhere.example' } }),
    401,
    'invalid_token',
    /another issuer/,
  ],
  ['a badly signed token', () => forged(), 401, 'invalid_token', /badly signed/],
  ['a malformed token', async () => 'bm90IGpzb24.bm90IGpzb24.c2lnbmF0dXJl', 401, 'invalid_token', /malformed/],
  [
    'a token without the scope every call needs',
    () => issuer.token('alice', { claims: { org: 'acme', scope: 'openid' } }),
    403,
    'insufficient_scope',
    /needs the scope "agent"/,
  ],
  [
    'a token without the scope SendMessage needs',
    () => issuer.token('alice', { claims: { org: 'acme', scope: 'agent' } }),
    403,
    'insufficient_scope',
    /Send(Streaming)?Message needs the scope "agent.write"/,
  ],
];

async function forged() {
  const kid = JSON.parse(Buffer.from((await issuer.token('x')).split('.')[0]!, 'base64url').toString()).kid;
  return issuer.token('alice', { foreignKey: true, kid, claims: { org: 'acme', scope: 'agent agent.write' } });
}

const SEND = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'SendMessage',
  params: { message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'hello' }] } },
});

describe('issue 38: refusals on every transport', () => {
  for (const [label, make, status, error, reason] of REFUSALS) {
    it(`issue 38: ${label}: JSON-RPC ${status}, WWW-Authenticate error="${error}" naming why, never the token`, async () => {
      const token = await make();
      const response = await fetch(`${h.harness.url}/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...as(token) },
        body: SEND,
      });
      assert.equal(response.status, status);
      const header = response.headers.get('www-authenticate') ?? '';
      assert.match(header, new RegExp(`^Bearer realm="tiny-harness", error="${error}", error_description="`));
      const body = await response.json();
      assert.match(body.error.message, reason);
      const signature = token.split('.')[2]!;
      assert.ok(!header.includes(signature) && !JSON.stringify(body).includes(signature), 'the token is not echoed');
    });

    it(`issue 38: ${label}: HTTP+JSON ${status} with its status name`, async () => {
      const response = await fetch(`${h.harness.url}/a2a/rest/message:send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...as(await make()) },
        body: JSON.stringify({ message: { messageId: 'm-2', role: 'ROLE_USER', parts: [{ text: 'hello' }] } }),
      });
      assert.equal(response.status, status);
      assert.match(response.headers.get('www-authenticate') ?? '', new RegExp(`error="${error}"`));
      const body = await response.json();
      assert.equal(body.error.status, status === 401 ? 'UNAUTHENTICATED' : 'PERMISSION_DENIED');
      assert.match(body.error.message, reason);
    });

    it(`issue 38: ${label}: gRPC ${status === 401 ? 'UNAUTHENTICATED' : 'PERMISSION_DENIED'}, unary and streaming`, async () => {
      const client = await createClient(h.harness.url, 'GRPC', as(await make()));
      const code = status === 401 ? /UNAUTHENTICATED|\b16\b/ : /PERMISSION_DENIED|\b7\b/;
      const matches = (failure: any) =>
        code.test(`${failure?.code} ${failure?.message} ${failure?.cause?.code}`) &&
        reason.test(`${failure?.message} ${failure?.cause?.details}`);
      await assert.rejects(send(client, 'hi'), matches);
      await assert.rejects(collect(sendStream(client, 'hi')), matches);
    });
  }

  it("issue 38: a token with the scopes every call needs but not SendMessage's still reads (GetTask, ListTasks)", async () => {
    const reader = await createClient(
      h.harness.url,
      'JSONRPC',
      as(await issuer.token('alice', { claims: { org: 'acme', scope: 'agent' } })),
    );
    assert.ok(Array.isArray((await list(reader)).tasks));
  });
});

describe('issue 38: the tokens file beside OpenID Connect', () => {
  for (const transport of TRANSPORTS) {
    it(`issue 38: over ${transport}, a token that is not a JWT is looked up in the file; a JWT of the issuer is checked by it`, async () => {
      const filer = await h.client(transport, as(FILE_TOKEN));
      const filed = await send(filer, 'hello from the file');
      const alice = await h.client(transport, users.alice!);
      await assert.rejects(alice.getTask({ tenant: '', id: filed.id, historyLength: 0 }), /not found/i);
      assert.equal((await send(alice, 'hello from acme')).status?.state !== undefined, true);
    });
  }
});

describe('issue 38: a key rotated while serving', () => {
  it('issue 38: after the issuer rotates its key, tokens of the new key are accepted, without a restart', async () => {
    const before = await h.client('JSONRPC', users.alice!);
    const task = await send(before, 'before the rotation');
    await issuer.rotate();
    const fresh = as(await tokenOf('alice', 'acme'));
    const after = await h.client('GRPC', fresh);
    assert.equal((await after.getTask({ tenant: '', id: task.id, historyLength: 0 })).id, task.id);
    // The old key left the JWKS: its tokens no longer pass.
    const stale = await h.client('HTTP+JSON', users.alice!);
    await assert.rejects(list(stale), /401|unauthenticated|key the issuer does not publish/i);
    users.alice = fresh;
    users.bob = as(await tokenOf('bob', 'acme'));
    users.carolAcme = as(await tokenOf('carol', 'acme'));
    users.carolGlobex = as(await tokenOf('carol', 'globex'));
  });
});

const oneTenant = (): TwoUsers => ({ h, alice: users.alice!, bob: users.bob! });
const twoTenants = (): TwoUsers => ({ h, alice: users.carolAcme!, bob: users.carolGlobex! });
describeUserIsolation('issue 38: OpenID Connect, one tenant', 'JSONRPC', oneTenant);
describeUserIsolation('issue 38: OpenID Connect, one tenant', 'GRPC', oneTenant);
describeUserIsolation('issue 38: OpenID Connect, two tenants, the same sub', 'HTTP+JSON', twoTenants);
describeUserIsolation('issue 38: OpenID Connect, two tenants, the same sub', 'GRPC', twoTenants);

describe('issue 38: OpenID Connect users on PostgreSQL', needs(POSTGRES), () => {
  let schema: TempSchema;
  let pg: TestHarness;
  before(async () => {
    schema = await tempSchema();
    pg = await harness(schema.url);
  });
  after(async () => {
    await pg?.close();
    await schema?.drop();
  });
  describeUserIsolation('issue 38: PostgreSQL, one tenant', 'JSONRPC', () => ({ ...oneTenant(), h: pg }));
  describeUserIsolation('issue 38: PostgreSQL, two tenants, the same sub', 'GRPC', () => ({ ...twoTenants(), h: pg }));
});

describe('issue 38: the identity provider out of reach', () => {
  let gone: TestIssuer;
  let down: TestHarness;
  before(async () => {
    gone = await startTestIssuer();
    await gone.close();
    down = await startTestHarness({
      config: { auth: { oidc: { issuer: gone.issuer, audience: TEST_AUDIENCE } } },
    });
  });
  after(async () => {
    await down?.close();
  });

  it('issue 38: a JWT is refused retryably (503 with Retry-After, gRPC UNAVAILABLE), not as a bad token', async () => {
    const token = await issuer.token('alice');
    const response = await fetch(`${down.harness.url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...as(token) },
      body: SEND,
    });
    assert.equal(response.status, 503);
    assert.ok(response.headers.get('retry-after'));
    assert.match((await response.json()).error.message, /identity provider cannot be reached/);
    const client = await createClient(down.harness.url, 'GRPC', as(token));
    await assert.rejects(send(client, 'hi'), (failure: any) =>
      /UNAVAILABLE|\b14\b/.test(`${failure?.code} ${failure?.message} ${failure?.cause?.code}`),
    );
  });
});
