import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTokens, parseTokenEnv, parseTokenFile, TOKENS_ENV } from '../../src/server/auth-tokens.js';
import { bearerToken, TokenAuthenticator } from '../../src/server/auth.js';

const A = 'a-secret-token-0123456789';
const B = 'b-secret-token-0123456789';

function withFile(text: string, run: (file: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tiny-harness-tokens-'));
  const file = join(dir, 'tokens');
  writeFileSync(file, text);
  return run(file).finally(() => rmSync(dir, { recursive: true, force: true }));
}

/** Asserts that loading throws tokens_invalid with a message matching `pattern` and without `secret`. */
async function refuses(sources: Parameters<typeof loadTokens>[0], pattern: RegExp, secret?: string): Promise<void> {
  await assert.rejects(loadTokens(sources), (error: any) => {
    assert.equal(error.code, 'tokens_invalid');
    assert.match(error.message, pattern);
    if (secret) assert.ok(!error.message.includes(secret), `the message shows the token: ${error.message}`);
    return true;
  });
}

describe('token sources', () => {
  it('nothing configured: authentication stays off', async () => {
    assert.equal(await loadTokens({ env: {} }), undefined);
    assert.equal(await loadTokens({ env: { [TOKENS_ENV]: '  ' } }), undefined);
  });

  it('the environment: comma-separated user:token pairs, spaces trimmed', async () => {
    const table = await loadTokens({ env: { [TOKENS_ENV]: ` alice:${A} , bob:${B},` } });
    assert.deepEqual(
      [...table!],
      [
        [A, 'alice'],
        [B, 'bob'],
      ],
    );
  });

  it('a file: one pair a line, comments and blank lines ignored; merged with the environment', async () => {
    await withFile(`# the team\n\nalice:${A}\r\n  # bob below\nbob@example.com:${B}\n`, async (file) => {
      const table = await loadTokens({ env: { [TOKENS_ENV]: `carol:c-secret-token-0123456789` }, file });
      assert.deepEqual([...table!.values()].sort(), ['alice', 'bob@example.com', 'carol']);
    });
  });

  it('a token may hold colons; a user may have two tokens', () => {
    const entries = parseTokenEnv(`alice:${A}:x,alice:${B}`);
    assert.deepEqual(
      entries.map((e) => [e.user, e.token]),
      [
        ['alice', `${A}:x`],
        ['alice', B],
      ],
    );
  });

  it('a malformed line names the file and the line, never the token', async () => {
    const cases: Array<[string, RegExp]> = [
      [`alice:${A}\n\n# ok\nbob ${B}\n`, /line 4 of the tokens file ".*tokens" has no colon/i],
      [`alice:${A}\nbob:short-secret\n`, /line 2 .* shorter than 16 characters/i],
      [`al ice:${A}\n`, /line 1 .* user name with characters/i],
      [`:${A}\n`, /line 1 .* has no user name/i],
      [`alice:${A} ${B}\n`, /line 1 .* white space/i],
    ];
    for (const [text, pattern] of cases) {
      await withFile(text, (file) => refuses({ file }, pattern, B));
    }
    await withFile(`alice:${A}\nbob:short-secret\n`, (file) => refuses({ file }, /tokens/, 'short-secret'));
  });

  it('one token for two users is refused, naming both places', async () => {
    await withFile(`alice:${A}\nbob:${A}\n`, (file) => refuses({ file }, /at .*tokens:2 .* at .*tokens:1/, A));
    await refuses({ env: { [TOKENS_ENV]: `alice:${A},bob:${A}` } }, /TINY_HARNESS_TOKENS entry 2 .* entry 1/, A);
  });

  it('a malformed environment entry names the variable and the entry', async () => {
    await refuses({ env: { [TOKENS_ENV]: `alice:${A},bob=${B}` } }, /entry 2 of TINY_HARNESS_TOKENS/i, B);
  });

  it('a missing file is named', async () => {
    await refuses(
      { file: join(tmpdir(), 'no-such-tokens-file') },
      /Cannot read the tokens file ".*no-such-tokens-file": no such file/,
    );
  });

  it('parseTokenFile reports line numbers counting comments and blanks', () => {
    assert.equal(parseTokenFile(`# c\n\nalice:${A}`, 'f')[0]!.where, 'f:3');
  });
});

describe('TokenAuthenticator', () => {
  const auth = new TokenAuthenticator(
    new Map([
      [A, 'alice'],
      [B, 'bob'],
    ]),
  );

  it('knows each token and only those', () => {
    assert.equal(auth.authenticate(`Bearer ${A}`)?.userName, 'alice');
    assert.equal(auth.authenticate(`bearer ${B}`)?.userName, 'bob');
    assert.equal(auth.authenticate(`Bearer ${B}`)?.isAuthenticated, true);
    for (const header of [
      undefined,
      '',
      'Bearer',
      `Bearer ${A}x`,
      `Bearer ${A.slice(0, -1)}`,
      `Basic ${A}`,
      A,
      `Bearer ${A} ${B}`,
      [`Bearer ${A}`, `Bearer ${B}`],
    ]) {
      assert.equal(auth.authenticate(header), undefined, String(header));
    }
  });

  it('bearerToken takes one header value with the Bearer scheme', () => {
    assert.equal(bearerToken(['Bearer abc']), 'abc');
    assert.equal(bearerToken('  BEARER   abc  '), 'abc');
    assert.equal(bearerToken('Token abc'), undefined);
  });

  it('lists user names, never tokens', () => {
    assert.deepEqual(auth.users(), ['alice', 'bob']);
  });
});
