/**
 * `tiny-harness serve` logs for whoever reads its standard error: short human lines on a
 * terminal (a tmux pane), JSON lines anywhere else (a pipe).
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { needs } from '../needs.js';
import { TMUX, Tmux, type ChatPane } from '../client/support.js';
import { cliProgram, spawnGroup } from '../support/processes.js';

describe('the log of serve', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tiny-harness-log-'));
  const tmux = new Tmux();
  let pane: ChatPane | undefined;

  after(async () => {
    await pane?.kill();
    await tmux.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('on a terminal: human lines, no JSON', needs(TMUX), async () => {
    pane = await tmux.cli(
      ['serve', '--port', '0', '--grpc-port', '0', '--data-dir', join(dataDir, 'tty')],
      'listening',
    );
    const screen = await pane.waitFor((s) => /\] INFO: /.test(s));
    assert.match(screen, /^\[\d\d:\d\d:\d\d\] INFO: /m);
    assert.doesNotMatch(screen, /\{"level"/);
  });

  it('into a pipe: one JSON object per line', async () => {
    const child = spawnGroup(
      process.execPath,
      [...cliProgram(), 'serve', '--port', '0', '--grpc-port', '0', '--data-dir', join(dataDir, 'pipe')],
      {
        env: { ...process.env, OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '' },
      },
    );
    try {
      let stderr = '';
      await new Promise<void>((resolve, reject) => {
        child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
          stderr += chunk;
          if (stderr.includes('"msg":"ready"')) resolve();
        });
      });
      const logLines = stderr.split('\n').filter((line) => line.startsWith('{'));
      assert.ok(logLines.length > 0, stderr);
      for (const line of logLines) {
        const entry = JSON.parse(line);
        assert.equal(typeof entry.time, 'string');
        assert.equal(typeof entry.msg, 'string');
        assert.match(entry.level, /^(info|warn|error)$/);
      }
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('close', resolve));
    }
  });
});
