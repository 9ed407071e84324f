/**
 * Issue 38: the Keycloak and Google configurations docs/security.md gives are tried against the
 * test issuer: each is read from the page, valid as it stands, pointed at a loopback issuer, and
 * a token shaped as that provider's passes, as the user the page says. (Not the real providers.)
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configSchema } from '../../src/config/schema.js';
import { Authenticator } from '../../src/server/authentication.js';
import { startTestIssuer, type TestIssuer } from '../fixtures/oidc-issuer.js';
import { ROOT } from '../support/processes.js';

let issuer: TestIssuer;

before(async () => {
  issuer = await startTestIssuer();
});

after(async () => {
  await issuer?.close();
});

/** The JSON block after `<!-- oidc-config: name -->` in docs/security.md. */
function documented(name: string): { auth: { oidc: Record<string, unknown> } } {
  const page = readFileSync(join(ROOT, 'docs', 'security.md'), 'utf8');
  const match = new RegExp(`<!-- oidc-config: ${name} -->\\s*\`\`\`json\\n([\\s\\S]*?)\`\`\``).exec(page);
  assert.ok(match, `docs/security.md has the ${name} configuration`);
  return JSON.parse(match[1]!);
}

async function userOf(name: string, claims: Record<string, unknown>): Promise<string> {
  const config = documented(name);
  assert.ok(configSchema.safeParse(config).success, `the ${name} configuration is valid as written`);
  const oidc = configSchema.parse({ auth: { oidc: { ...config.auth.oidc, issuer: issuer.issuer } } }).auth.oidc!;
  const token = await issuer.token(String(claims.sub), { claims: { ...claims, iss: issuer.issuer } });
  const outcome = await new Authenticator(undefined, oidc).authenticate(`Bearer ${token}`);
  if ('refusal' in outcome) assert.fail(`refused: ${outcome.refusal.message}`);
  const denied = new Authenticator(undefined, oidc).scopeRefusal(outcome.user, 'sendMessage');
  assert.equal(denied, undefined, 'the scopes the configuration asks for are there');
  return outcome.user.userName;
}

describe('issue 38: the provider configurations of docs/security.md, against the test issuer', () => {
  it('issue 38: Keycloak: an access token with the audience mapper, the client scope and the tenant attribute', async () => {
    const user = await userOf('keycloak', {
      sub: 'f1c2a3b4-0000-4000-8000-000000000001',
      aud: ['tiny-harness', 'account'],
      azp: 'cli',
      scope: 'openid profile tiny-harness',
      preferred_username: 'alice',
      tenant: 'acme',
    });
    assert.equal(user, 'acme/f1c2a3b4-0000-4000-8000-000000000001');
  });

  it("issue 38: Google: a service account's ID token for the agent's audience, with its email", async () => {
    const user = await userOf('google', {
      sub: '112233445566778899000',
      aud: 'https://agent.example.com',
      azp: '112233445566778899000',
      email: 'caller@project.iam.gserviceaccount.com',
      email_verified: true,
    });
    assert.equal(user, 'caller@project.iam.gserviceaccount.com');
  });
});
