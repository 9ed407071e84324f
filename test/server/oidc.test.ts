/**
 * Issue 38, checking tokens: the one authenticator every binding uses (`server/authentication.ts`)
 * against a test issuer on loopback: each refusal named, the keys rotated without a restart, a
 * flood of unknown key ids reading the keys at most once per interval, tenants and scopes, and
 * the tokens file beside it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT } from 'jose';
import { Authenticator, wwwAuthenticate, type OidcAuthOptions } from '../../src/server/authentication.js';
import { TokenAuthenticator } from '../../src/server/auth.js';
import { configSchema } from '../../src/config/schema.js';
import { startTestIssuer, TEST_AUDIENCE, type TestIssuer } from '../fixtures/oidc-issuer.js';

let issuer: TestIssuer;

before(async () => {
  issuer = await startTestIssuer();
});

after(async () => {
  await issuer?.close();
});

const FILE_TOKEN = 'file-token-0123456789abcdef';

function oidcOptions(over: Partial<OidcAuthOptions> & Record<string, unknown> = {}): OidcAuthOptions {
  return configSchema.parse({ auth: { oidc: { issuer: issuer.issuer, audience: TEST_AUDIENCE, ...over } } }).auth.oidc!;
}

const bearer = (token: string) => `Bearer ${token}`;

async function refusalOf(authenticator: Authenticator, token: string) {
  const outcome = await authenticator.authenticate(bearer(token));
  assert.ok('refusal' in outcome, 'the token is refused');
  return outcome.refusal;
}

describe('issue 38: an OpenID Connect token', () => {
  it('of the issuer, for the audience, names its user by sub; RS256 and ES256 by default', async () => {
    const authenticator = new Authenticator(undefined, oidcOptions());
    for (const alg of ['RS256', 'ES256'] as const) {
      const outcome = await authenticator.authenticate(bearer(await issuer.token('alice', { alg })));
      assert.ok('user' in outcome);
      assert.equal(outcome.user.userName, 'alice');
    }
  });

  const refusals: [string, () => Promise<string>, RegExp][] = [
    ['expired', () => issuer.token('alice', { expiresIn: -3600 }), /expired/],
    ['for another audience', () => issuer.token('alice', { claims: { aud: 'someone-else' } }), /another audience/],
    ['from another issuer', () => issuer.token('alice', { claims: { iss: 'https://evil.example' } }), /another issuer/],
    ['signed by a key the issuer never published, under its key id', () => forged(), /badly signed/],
    ['with its signature changed', async () => tampered(await issuer.token('alice')), /badly signed/],
    ['malformed', async () => 'bm90IGpzb24.bm90IGpzb24.c2lnbmF0dXJl', /malformed/],
    ['unsigned (alg none)', async () => unsigned(), /malformed|algorithm/],
    ['signed with HS256', async () => hmac(), /algorithm not accepted/],
  ];
  for (const [label, make, reason] of refusals) {
    it(`${label}: refused as invalid_token, the description naming why and never the token`, async () => {
      const authenticator = new Authenticator(undefined, oidcOptions());
      const token = await make();
      const refusal = await refusalOf(authenticator, token);
      assert.equal(refusal.code, 'token_invalid');
      assert.match(refusal.message, reason);
      const header = wwwAuthenticate(refusal);
      assert.match(header, /^Bearer realm="tiny-harness", error="invalid_token", error_description="[^"]+"$/);
      for (const part of token.split('.').filter((p) => p.length > 8)) {
        assert.ok(!header.includes(part) && !refusal.message.includes(part), 'no part of the token is echoed');
      }
    });
  }

  async function forged() {
    // The issuer's own key id, signed with another key.
    const genuine = await issuer.token('alice');
    const kid = JSON.parse(Buffer.from(genuine.split('.')[0]!, 'base64url').toString()).kid;
    return issuer.token('alice', { foreignKey: true, kid });
  }
  function tampered(token: string) {
    const [head, body, signature] = token.split('.');
    const flipped = (signature![0] === 'A' ? 'B' : 'A') + signature!.slice(1);
    return `${head}.${body}.${flipped}`;
  }
  function unsigned() {
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const exp = Math.floor(Date.now() / 1000) + 3600;
    return `${part({ alg: 'none' })}.${part({ sub: 'alice', aud: TEST_AUDIENCE, iss: issuer.issuer, exp })}.`;
  }
  function hmac() {
    return new SignJWT({ sub: 'alice', aud: TEST_AUDIENCE, iss: issuer.issuer })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('a-shared-secret-of-at-least-32-bytes!!'));
  }

  it('the config refuses an issuer over plain http but on a loopback address', () => {
    const parse = (url: string) => configSchema.safeParse({ auth: { oidc: { issuer: url, audience: 'a' } } }).success;
    assert.equal(parse('http://idp.example.com'), false);
    assert.equal(parse('https://idp.example.com/realms/acme'), true);
    assert.equal(parse('http://127.0.0.1:8080'), true);
  });

  it('the config refuses none and HS* among the algorithms', () => {
    for (const alg of ['none', 'HS256']) {
      const parsed = configSchema.safeParse({
        auth: { oidc: { issuer: issuer.issuer, audience: TEST_AUDIENCE, algorithms: [alg] } },
      });
      assert.equal(parsed.success, false, alg);
    }
  });

  it('an algorithm allowed by the key but not configured is refused', async () => {
    const authenticator = new Authenticator(undefined, oidcOptions({ algorithms: ['RS256'] }));
    const refusal = await refusalOf(authenticator, await issuer.token('alice', { alg: 'ES256' }));
    assert.match(refusal.message, /algorithm not accepted/);
  });

  it('a rotated key is taken up without a restart: the keys are read again on its new key id', async () => {
    const authenticator = new Authenticator(undefined, oidcOptions({ keysRefetchIntervalMs: 0 }));
    assert.ok('user' in (await authenticator.authenticate(bearer(await issuer.token('alice')))));
    const reads = issuer.jwksReads();
    await issuer.rotate();
    const outcome = await authenticator.authenticate(bearer(await issuer.token('alice')));
    assert.ok('user' in outcome, 'a token of the new key is accepted');
    assert.equal(issuer.jwksReads(), reads + 1, 'the keys were read once more');
  });

  it('a flood of tokens with unknown key ids reads the keys at most once per interval', async () => {
    const authenticator = new Authenticator(undefined, oidcOptions({ keysRefetchIntervalMs: 600_000 }));
    assert.ok('user' in (await authenticator.authenticate(bearer(await issuer.token('alice')))));
    const reads = issuer.jwksReads();
    const flood = await Promise.all(
      Array.from({ length: 50 }, (_, i) => issuer.token('mallory', { kid: `unknown-${i}` })),
    );
    const refused = await Promise.all(flood.map((token) => refusalOf(authenticator, token)));
    for (const refusal of refused) assert.match(refusal.message, /key the issuer does not publish/);
    assert.equal(issuer.jwksReads(), reads, 'no read within the interval after the last one');
    assert.ok('user' in (await authenticator.authenticate(bearer(await issuer.token('alice')))), 'valid ones pass');
  });

  it('with a tenant claim the user is tenant/sub; a token without the claim, or with a "/" in it, is refused', async () => {
    const authenticator = new Authenticator(undefined, oidcOptions({ tenantClaim: 'org' }));
    const outcome = await authenticator.authenticate(bearer(await issuer.token('alice', { claims: { org: 'acme' } })));
    assert.ok('user' in outcome);
    assert.equal(outcome.user.userName, 'acme/alice');
    assert.match((await refusalOf(authenticator, await issuer.token('alice'))).message, /no "org" claim/);
    const slashed = await issuer.token('alice', { claims: { org: 'acme/evil' } });
    assert.match((await refusalOf(authenticator, slashed)).message, /"org" claim holds a "\/"/);
  });

  it('userClaim names the user by another claim', async () => {
    const authenticator = new Authenticator(undefined, oidcOptions({ userClaim: 'email' }));
    const outcome = await authenticator.authenticate(
      bearer(await issuer.token('1234', { claims: { email: 'alice@example.com' } })),
    );
    assert.ok('user' in outcome);
    assert.equal(outcome.user.userName, 'alice@example.com');
  });

  it('scopes: required for everything and per method, read from scope or scp; a file user has none to check', async () => {
    const authenticator = new Authenticator(
      new TokenAuthenticator(new Map([[FILE_TOKEN, 'filer']])),
      oidcOptions({ requiredScopes: ['agent'], methodScopes: { SendMessage: ['agent.write'] } }),
    );
    const userOf = async (token: string) => {
      const outcome = await authenticator.authenticate(bearer(token));
      assert.ok('user' in outcome);
      return outcome.user;
    };
    const reader = await userOf(await issuer.token('r', { claims: { scope: 'openid agent' } }));
    assert.equal(authenticator.scopeRefusal(reader, 'getTask'), undefined);
    const denied = authenticator.scopeRefusal(reader, 'sendMessage')!;
    assert.equal(denied.code, 'scope_insufficient');
    assert.match(denied.message, /SendMessage needs the scope "agent.write"/);
    assert.equal(
      wwwAuthenticate(denied),
      'Bearer realm="tiny-harness", error="insufficient_scope", error_description="SendMessage needs the scope \'agent.write\'.", scope="agent agent.write"',
    );
    const writer = await userOf(await issuer.token('w', { claims: { scp: ['agent', 'agent.write'] } }));
    assert.equal(authenticator.scopeRefusal(writer, 'sendMessage'), undefined);
    const none = await userOf(await issuer.token('n'));
    assert.equal(authenticator.scopeRefusal(none, 'getTask')?.code, 'scope_insufficient');
    assert.equal(authenticator.scopeRefusal(await userOf(FILE_TOKEN), 'sendMessage'), undefined);
  });

  it('beside the tokens file: a token that is not a JWT is looked up in the file', async () => {
    const authenticator = new Authenticator(new TokenAuthenticator(new Map([[FILE_TOKEN, 'filer']])), oidcOptions());
    const filed = await authenticator.authenticate(bearer(FILE_TOKEN));
    assert.ok('user' in filed);
    assert.equal(filed.user.userName, 'filer');
    const jwt = await authenticator.authenticate(bearer(await issuer.token('alice')));
    assert.ok('user' in jwt && jwt.user.userName === 'alice');
    const unknown = await refusalOf(authenticator, 'not-a-jwt-and-not-in-the-file');
    assert.equal(unknown.code, 'token_invalid');
    const missing = await authenticator.authenticate(undefined);
    assert.ok('refusal' in missing && missing.refusal.code === 'unauthenticated');
    assert.equal(wwwAuthenticate(missing.refusal), 'Bearer realm="tiny-harness"');
  });

  it('an issuer out of reach: identity_unavailable (retry later), its discovery read again only after the interval', async () => {
    const gone = await startTestIssuer();
    const options = { ...oidcOptions({ keysRefetchIntervalMs: 600_000 }), issuer: gone.issuer };
    const token = await gone.token('alice');
    await gone.close();
    let reads = 0;
    const counting: typeof fetch = (input, init) => (reads++, fetch(input, init));
    const authenticator = new Authenticator(undefined, options, counting);
    for (let i = 0; i < 3; i++) assert.equal((await refusalOf(authenticator, token)).code, 'identity_unavailable');
    assert.equal(reads, 1, 'one attempt within the interval');
  });

  it('a discovery document naming another issuer is not trusted', async () => {
    const authenticator = new Authenticator(undefined, { ...oidcOptions(), issuer: `${issuer.issuer}/` });
    assert.equal((await refusalOf(authenticator, await issuer.token('alice'))).code, 'identity_unavailable');
  });
});
