import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServerProcess } from '../e2e/process.js';

/**
 * Memory stays bounded however much is stored: the real command line, in a child process
 * whose heap is capped far below what the test sends, keeps serving. With a cache bounded
 * by a count of tasks, 4 MB messages filled a 4 GB heap and the process died of it.
 * SQLite only: the bound is the same code on both backends (task-cache.test.ts checks it on
 * each); this proves it once through the real command line.
 */

const HEAP_MB = 96;
const CACHE_BYTES = 16_000_000;
/**
 * Each message is just under the edge's bound of 1,000,000 characters; each turn keeps the
 * message and the echo's reply (artifact, status, history), some 4 MB: 240 MB in all, well
 * past the heap, which a cache bounded by a count of tasks would hold whole.
 */
const MESSAGES = 60;
const TEXT_CHARS = 990_000;

async function rpc(
  url: string,
  method: string,
  params: unknown,
): Promise<{ result?: any; error?: { code: number; message: string } }> {
  const response = await fetch(`${url}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, params }),
  });
  return response.json() as Promise<{ result?: any; error?: { code: number; message: string } }>;
}

describe('memory under large messages', () => {
  it(`keeps serving with a ${HEAP_MB} MB heap after ${MESSAGES} messages of ${TEXT_CHARS / 1e6} MB each (cacheBytes ${CACHE_BYTES / 1e6} MB)`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tiny-harness-heap-'));
    const config = join(dir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({ detectOllama: false, defaultModel: 'builtin:echo', cacheBytes: CACHE_BYTES }),
    );
    const server = await startServerProcess(['--data-dir', join(dir, 'data'), '--config', config], {
      NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}`,
    });
    try {
      const ids: string[] = [];
      for (let i = 0; i < MESSAGES; i++) {
        const text = `${i} ${'a'.repeat(TEXT_CHARS)}`;
        const sent = await rpc(server.url, 'SendMessage', {
          message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] },
        }).catch((error: Error) => {
          throw new Error(`message ${i} failed (${error.message}); server log: ${server.stderr().slice(-2000)}`);
        });
        assert.equal(sent.error, undefined, `message ${i}: ${sent.error?.message}`);
        assert.equal(sent.result.task.status.state, 'TASK_STATE_INPUT_REQUIRED');
        ids.push(sent.result.task.id);
      }
      // The first task, long gone from the cache, is read back whole; the last answers a command.
      const first = await rpc(server.url, 'GetTask', { id: ids[0], historyLength: 1 });
      assert.equal(first.error, undefined);
      assert.equal(first.result.id, ids[0]);
      assert.ok(first.result.history[0].parts[0].text.startsWith('You said: 0 aaa'));
      const status = await rpc(server.url, 'SendMessage', {
        message: { messageId: randomUUID(), role: 'ROLE_USER', taskId: ids.at(-1), parts: [{ text: '/status' }] },
      });
      assert.equal(status.error, undefined);
      assert.equal(server.child.exitCode, null);
      assert.doesNotMatch(server.stderr(), /heap out of memory/i);
    } finally {
      assert.equal(await server.stop('SIGTERM'), 0, `the server exits cleanly; log: ${server.stderr().slice(-2000)}`);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
