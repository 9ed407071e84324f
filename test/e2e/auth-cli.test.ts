/** The command line's side of authentication: tokens from the environment or a file, checked at start-up. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServerProcess } from './process.js';

const TOKEN = 'cli-test-token-0123456789abcdef';

describe('serve with tokens', () => {
  it('TINY_HARNESS_TOKENS turns authentication on; the log is JSON lines without the token', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tiny-harness-auth-cli-'));
    const server = await startServerProcess(['--data-dir', dataDir], { TINY_HARNESS_TOKENS: `alice:${TOKEN}` });
    try {
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: '/model' }] } },
      });
      const headers = { 'content-type': 'application/json', 'a2a-version': '1.0' };
      assert.equal((await fetch(`${server.url}/a2a/jsonrpc`, { method: 'POST', headers, body })).status, 401);
      const ok = await fetch(`${server.url}/a2a/jsonrpc`, {
        method: 'POST',
        headers: { ...headers, authorization: `Bearer ${TOKEN}` },
        body,
      });
      assert.equal(ok.status, 200);
      assert.ok((await ok.json()).result);
      assert.equal((await fetch(`${server.url}/.well-known/agent-card.json`)).status, 200);
    } finally {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
    const lines = server.stderr().trim().split('\n');
    for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), line);
    assert.ok(!server.stderr().includes(TOKEN));
    assert.ok(lines.some((line) => JSON.parse(line).msg === 'bearer-token authentication on'));
  });

  it('a malformed tokens file stops the server with its name and line, not the token', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tiny-harness-auth-cli-'));
    const file = join(dir, 'tokens.txt');
    writeFileSync(file, `# team\nalice:${TOKEN}\nbob:tooshort-secret\n`);
    try {
      await assert.rejects(startServerProcess(['--data-dir', dir, '--tokens-file', file]), (error: any) => {
        assert.match(error.message, /exited with 1/);
        assert.match(error.message, /line 3 of the tokens file ".*tokens\.txt"/i);
        assert.ok(!error.message.includes('tooshort-secret') && !error.message.includes(TOKEN));
        return true;
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
