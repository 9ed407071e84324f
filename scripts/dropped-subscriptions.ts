/**
 * How much a dropped `SubscribeToTask` stream costs the server: opens a subscription on an idle
 * task over JSON-RPC, reads its first event, destroys the socket, N times, then reports the
 * heap after a forced GC against the heap before, and any process warnings seen.
 *
 *   node --expose-gc --import tsx scripts/dropped-subscriptions.ts [--count 1000]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../src/config/load.js';
import { startHarness } from '../src/harness.js';

const countArg = process.argv.indexOf('--count');
const COUNT = countArg > 0 ? Number(process.argv[countArg + 1]) : 1000;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

const warnings: string[] = [];
process.on('warning', (warning) => warnings.push(`${warning.name}: ${warning.message}`));

function rpc(url: string, method: string, params: unknown): Promise<{ result: { task: { id: string } } }> {
  return fetch(`${url}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  }).then((r) => r.json());
}

/** Opens a subscription, waits for its first SSE event, then destroys the socket. */
function openAndDrop(url: string, taskId: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/a2a/jsonrpc`,
      { method: 'POST', headers: { 'content-type': 'application/json', 'a2a-version': '1.0' } },
      (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
        res.once('error', () => undefined);
      },
    );
    req.on('error', () => undefined);
    req.once('error', reject);
    req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id: taskId } }));
  });
}

const dataDir = mkdtempSync(join(tmpdir(), 'th-drop-'));
const harness = await startHarness({
  config: parseConfig(JSON.stringify({ detectOllama: false })),
  dataDir,
  host: '127.0.0.1',
  port: 0,
  env: {},
});
try {
  const created = await rpc(harness.url, 'SendMessage', {
    message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: '/status' }] },
  });
  const taskId: string = created.result.task.id;
  await openAndDrop(harness.url, taskId); // warm-up
  await new Promise((resolve) => setTimeout(resolve, 200));
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < COUNT; i += 1) await openAndDrop(harness.url, taskId);
  await new Promise((resolve) => setTimeout(resolve, 500)); // let the server see the closes
  gc();
  const after = process.memoryUsage().heapUsed;
  console.log(`${COUNT} dropped subscriptions: heap ${((after - before) / 2 ** 20).toFixed(1)} MB more after GC`);
  console.log(`warnings: ${warnings.length === 0 ? 'none' : [...new Set(warnings)].join(' | ')}`);
} finally {
  await harness.close();
  rmSync(dataDir, { recursive: true, force: true });
}
