import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { openStore } from '../../src/store/index.js';
import { startServerProcess } from '../e2e/process.js';
import { POSTGRESQL } from './helpers.js';
import { tempSchema } from '../support/postgres.js';
import { cliProgram, spawnGroup } from '../support/processes.js';

/**
 * The command line's way to the PostgreSQL store: `serve --database URL` or
 * TINY_HARNESS_DATABASE_URL (the flag wins). The URL may hold a password, which never reaches
 * the terminal or the log; a database that cannot be used stops start-up with one clear line.
 */

const UNREACHABLE = 'postgres://app:s3cret@127.0.0.1:1/harness';
const REFUSED =
  'tiny-harness: Cannot use the PostgreSQL database postgres://127.0.0.1:1/harness: the connection was refused (is the server running, on that port?).\n';

/** Runs `tiny-harness serve` until it exits on its own. */
function serveUntilExit(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'tiny-harness-cli-db-'));
  const child = spawnGroup(process.execPath, [...cliProgram(), 'serve', '--port', '0', '--data-dir', dir, ...args], {
    env: { ...process.env, TINY_HARNESS_DATABASE_URL: '', ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) =>
    child.once('close', (code) => {
      rmSync(dir, { recursive: true, force: true });
      resolve({ code, stdout, stderr });
    }),
  );
}

/** The lines of a log that are not JSON log entries: what a person reads as an error. */
function plainLines(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line !== '' && !line.startsWith('{'));
}

describe('serve --database', () => {
  it('stops with one line naming the database, never the URL or a stack, when the server cannot be reached', async () => {
    for (const [args, env] of [
      [['--database', UNREACHABLE], {}],
      [[], { TINY_HARNESS_DATABASE_URL: UNREACHABLE }],
      // The flag wins over the variable.
      [['--database', UNREACHABLE], { TINY_HARNESS_DATABASE_URL: 'mysql://elsewhere/db' }],
    ] as const) {
      const { code, stdout, stderr } = await serveUntilExit([...args], env);
      assert.equal(code, 1, stderr);
      assert.deepEqual(plainLines(stderr), [REFUSED.trim()]);
      assert.doesNotMatch(stdout + stderr, /s3cret|app@|\bat .*\.(?:ts|js):\d+/);
      const logged = stderr
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line));
      assert.ok(
        logged.some(
          (entry) => entry.msg === 'storing in PostgreSQL' && entry.database === 'postgres://127.0.0.1:1/harness',
        ),
        stderr,
      );
    }
  });

  it('refuses a URL that is not PostgreSQL without echoing it', async () => {
    const { code, stdout, stderr } = await serveUntilExit(['--database', 'mysql://root:s3cret@127.0.0.1/db']);
    assert.equal(code, 1);
    assert.deepEqual(plainLines(stderr), [
      'tiny-harness: The database URL must be a PostgreSQL URL such as postgres://user@host:5432/database.',
    ]);
    assert.doesNotMatch(stdout + stderr, /s3cret/);
  });

  it('stores the tasks it serves in the database the URL names', POSTGRESQL.needs, async () => {
    const schema = await tempSchema();
    const dir = mkdtempSync(join(tmpdir(), 'tiny-harness-cli-db-'));
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ detectOllama: false, defaultModel: 'builtin:echo' }));
    try {
      const server = await startServerProcess(['--data-dir', dir, '--config', config], {
        TINY_HARNESS_DATABASE_URL: schema.url,
      });
      let taskId: string;
      try {
        const response = await fetch(`${server.url}/a2a/jsonrpc`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'SendMessage',
            params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
          }),
        });
        const body = (await response.json()) as { result: { task: { id: string } } };
        taskId = body.result.task.id;
      } finally {
        assert.equal(await server.stop('SIGTERM'), 0, server.stderr());
      }
      assert.doesNotMatch(server.stderr(), /search_path|options=/, 'the URL is logged without its query');
      const store = await openStore({ databaseUrl: schema.url });
      try {
        const scope = (await store.tasks.scopeOfTask(taskId))!;
        const owner = new ServerCallContext({
          tenant: scope.tenant,
          user: { isAuthenticated: false, userName: scope.owner },
        });
        const history = (await store.tasks.load(taskId, owner))?.history.map((m) => String(m.parts[0]?.content?.value));
        assert.equal(history?.[0], 'hi');
        assert.match(history?.[1] ?? '', /^You said: hi/);
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await schema.drop();
    }
  });
});
