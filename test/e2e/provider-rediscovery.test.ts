/**
 * A provider whose server was down when the harness started is looked for again: on `/model`,
 * on a turn whose model is one of its, and every minute (here, every few milliseconds), with a
 * log line when it comes back. Until then it offers nothing, as at start-up.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../src/log.js';
import { startModelServer, type ModelServerScript, type RunningModelServer } from '../fixtures/model-server.js';
import { dataOf, send, startTestHarness, textOf, type TestHarness } from './support.js';
import { poll, waitFor } from '../support/wait.js';

const DOWN = { kind: 'status', status: 503 } as const;

let late: RunningModelServer | undefined;
let h: TestHarness | undefined;
const folders: string[] = [];

afterEach(async () => {
  await h?.close();
  h = undefined;
  await late?.close();
  late = undefined;
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** The fixture provider, and `late` on its own server. */
function withLate(server: RunningModelServer) {
  return (fixtureURL: string) => ({
    providers: {
      fixture: { type: 'openai-compatible' as const, baseURL: fixtureURL, models: ['small'] },
      late: { type: 'openai-compatible' as const, baseURL: server.baseURL },
    },
  });
}

function logLines(): { lines: string[]; log: ReturnType<typeof createLogger> } {
  const lines: string[] = [];
  return { lines, log: createLogger((line) => lines.push(line)) };
}

describe('a provider down at start-up', () => {
  it('/model lists its models once it answers again', async () => {
    const script: ModelServerScript = { models: ['tiny'], modelsFailure: DOWN };
    late = await startModelServer(script);
    h = await startTestHarness({ config: withLate(late) });
    const client = await h.client('JSONRPC');
    const before = await send(client, '/model');
    assert.deepEqual(
      dataOf(before.status?.message).models.map((m: { id: string }) => m.id),
      ['builtin:echo', 'builtin:stats', 'fixture:small'],
    );

    script.modelsFailure = undefined;
    const after = await send(client, '/model', { taskId: before.id });
    assert.deepEqual(
      dataOf(after.status?.message).models.map((m: { id: string }) => m.id),
      ['builtin:echo', 'builtin:stats', 'fixture:small', 'late:tiny'],
    );
    const chosen = await send(client, '/model late:tiny', { taskId: before.id });
    assert.match(textOf(chosen.status?.message), /now uses late:tiny/);
  });

  it('a turn on one of its models (chosen before a restart) finds it again and is answered by it', async () => {
    const script: ModelServerScript = { models: ['tiny'], reply: 'Answered by the late server.' };
    late = await startModelServer(script);
    const dataDir = mkdtempSync(join(tmpdir(), 'tiny-harness-rediscovery-'));
    folders.push(dataDir);
    h = await startTestHarness({ config: withLate(late), dataDir });
    let client = await h.client('JSONRPC');
    const task = await send(client, '/model late:tiny');
    await h.close();

    script.modelsFailure = DOWN;
    const { lines, log } = logLines();
    h = await startTestHarness({ config: withLate(late), dataDir, harness: { log } });
    assert.equal(h.harness.catalog.has('late:tiny'), false, 'down at start-up: not offered');
    script.modelsFailure = undefined;
    client = await h.client('JSONRPC');
    const answered = await send(client, 'are you there?', { taskId: task.id });
    assert.equal(textOf(answered.status?.message), 'Answered by the late server.');
    assert.ok(
      lines.some((line) => JSON.parse(line).msg === 'models: late answers again; offered now: late:tiny'),
      lines.join('\n'),
    );
  });

  it('is asked again on a timer, and the log says when it is back', async () => {
    const script: ModelServerScript = { models: ['tiny'], modelsFailure: DOWN };
    late = await startModelServer(script);
    const { lines, log } = logLines();
    h = await startTestHarness({ config: withLate(late), harness: { log, rediscoveryIntervalMs: 20 } });
    const probes = () => late!.requests.filter((r) => r.path.endsWith('/models')).length;
    await waitFor('three probes of the late provider', late!.events, 'request', () => probes() >= 3);
    assert.equal(h.harness.catalog.has('late:tiny'), false);
    script.modelsFailure = undefined;
    await poll('late:tiny in the catalog', () => h!.harness.catalog.has('late:tiny'));
    assert.ok(lines.some((line) => JSON.parse(line).msg === 'models: late answers again; offered now: late:tiny'));
  });
});
