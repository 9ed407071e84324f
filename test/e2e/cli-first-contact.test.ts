/**
 * The command line as a newcomer meets it: every subcommand answers --help, a mistyped
 * subcommand or flag gets a "did you mean", a port in use and a data folder that cannot be
 * used are named, and `serve` says what to do next once it listens.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DATABASE_FILE_NAME } from '../../src/store/index.js';
import { runCli } from '../client/support.js';
import { startServerProcess } from './process.js';
import { waitFor } from '../support/wait.js';

describe('the command line, first contact', () => {
  for (const sub of ['serve', 'chat', 'send', 'conform']) {
    it(`tiny-harness ${sub} --help prints the usage and exits 0`, async () => {
      const result = await runCli([sub, '--help']);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /^Usage:/m);
    });
  }

  it('a mistyped subcommand or flag gets one line with a "did you mean", exit code 2', async () => {
    const [sub, serveFlag, sendFlag] = await Promise.all([
      runCli(['chta', 'http://127.0.0.1:1']),
      runCli(['serve', '--prot', '9000']),
      runCli(['send', '--jsn', 'http://127.0.0.1:1', 'hi']),
    ]);
    assert.deepEqual(
      [sub, serveFlag, sendFlag].map((result) => [result.code, result.stderr, result.stdout]),
      [
        [2, "error: unknown command 'chta' (Did you mean chat?)\n", ''],
        [2, "error: unknown option '--prot' (Did you mean --port?)\n", ''],
        [2, "error: unknown option '--jsn' (Did you mean --json?)\n", ''],
      ],
    );
  });

  it('a flag value out of range is named with what would do, exit code 2; bare tiny-harness prints the help, exit 2', async () => {
    const port = await runCli(['serve', '--port', '70000']);
    assert.equal(port.code, 2);
    assert.match(port.stderr, /^error: option '--port <port>' argument '70000' is invalid\. .*0 to 65535/);
    const bare = await runCli([]);
    assert.equal(bare.code, 2);
    assert.match(bare.stderr, /^Usage: tiny-harness/);
  });

  it('a port in use is named, with the flags that choose another', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const taken = (blocker.address() as { port: number }).port;
    const dataDir = mkdtempSync(join(tmpdir(), 'tiny-harness-port-'));
    try {
      const result = await runCli(['serve', '--port', String(taken), '--data-dir', dataDir]);
      assert.equal(result.code, 1);
      assert.match(
        result.stderr,
        new RegExp(`the port ${taken} is already in use; choose another with --port or --grpc-port`),
      );
    } finally {
      blocker.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('a data folder that cannot be made is named, with the flag that chooses another; so is a file that is not a database', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tiny-harness-data-'));
    try {
      writeFileSync(join(dataDir, 'a-file'), 'not a folder');
      const blocked = await runCli(['serve', '--port', '0', '--data-dir', join(dataDir, 'a-file', 'data')]);
      assert.equal(blocked.code, 1);
      assert.equal(
        blocked.stderr.trim(),
        `tiny-harness: Cannot use the data folder ${join(dataDir, 'a-file', 'data')}: a file stands where a folder is needed. Choose another folder with --data-dir.`,
      );

      const other = join(dataDir, 'other');
      mkdirSync(other);
      writeFileSync(join(other, DATABASE_FILE_NAME), 'these are notes, not a database; '.repeat(200));
      const notDatabase = await runCli(['serve', '--port', '0', '--data-dir', other]);
      assert.equal(notDatabase.code, 1);
      assert.match(
        notDatabase.stderr,
        new RegExp(
          `^tiny-harness: Cannot open the database file ${join(other, DATABASE_FILE_NAME).replace(/[.]/g, '\\.')}: it is not a SQLite database .*--data-dir\\.\n$`,
        ),
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('once listening, serve says where the page is, how to chat and where the command files are (a log line off a terminal)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tiny-harness-ready-'));
    const server = await startServerProcess(['--data-dir', dataDir]);
    try {
      const line = await waitFor(
        'the ready log line',
        server.child.stderr!,
        'data',
        () =>
          server
            .stderr()
            .split('\n')
            .slice(0, -1) // whole lines only
            .find((l) => l.includes('"msg":"ready"')),
        { seen: () => server.stderr() },
      );
      const ready = JSON.parse(line) as Record<string, string>;
      assert.equal(ready.page, `${server.url}/`);
      assert.equal(ready.chat, `npx tiny-harness chat ${server.url}`);
      assert.equal(ready.commandsDir, join(dataDir, 'commands'));
    } finally {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
