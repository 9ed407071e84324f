/**
 * A retryable refusal is an answer, not a failure (issue 33): the command line's log holds no
 * error line for it (the SDK prints one for every JSON-RPC stream refused before its first
 * event, which the log used to write at error level), and `/metrics` counts it by reason.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startModelServer, type RunningModelServer } from '../fixtures/model-server.js';
import { nextMatching } from '../support/wait.js';
import { startServerProcess, writeFixtureConfig, type ServerProcess } from './process.js';
import { assertRetryable, createClient, sendStream } from './support.js';

describe('a refusal at the turn bound, in the log and the metrics of `serve`', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tiny-harness-refusal-log-'));
  let model: RunningModelServer;
  let server: ServerProcess;
  let release = () => {};

  before(async () => {
    const held = new Promise<void>((resolve) => (release = resolve));
    model = await startModelServer({ reply: 'one two three', hold: { afterChunks: 1, until: held } });
    const config = writeFixtureConfig(dir, model.baseURL, { extra: { maxTurnsInFlight: 1 } });
    server = await startServerProcess(['--config', config, '--data-dir', join(dir, 'data')]);
  });

  after(async () => {
    release();
    await server?.stop();
    await model?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refused streams leave no error line in the log, and are counted as tiny_harness_a2a_refusals_total{reason="turns_at_limit"}', async () => {
    const client = await createClient(server.url, 'JSONRPC');
    const running = sendStream(client, 'held');
    await nextMatching('the held turn streaming', running, (event) => event.payload?.$case === 'artifactUpdate');
    for (let i = 0; i < 3; i++) {
      const refused = await sendStream(client, `refused ${i}`)
        .next()
        .then(
          () => assert.fail('a turn past the bound was accepted'),
          (error: unknown) => error,
        );
      assertRetryable('JSONRPC', refused);
    }
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    assert.match(metrics, /^tiny_harness_a2a_refusals_total\{reason="turns_at_limit"\} 3$/m);
    // The A2A error's class name, as the bundle keeps it (esbuild renames colliding classes otherwise).
    assert.match(
      metrics,
      /^tiny_harness_a2a_requests_total\{method="SendStreamingMessage",outcome="UnavailableError"\} 3$/m,
    );
    const errors = server
      .stderr()
      .split('\n')
      .filter((line) => line.includes('"level":"error"'));
    assert.deepEqual(errors, [], 'no error line');
  });
});
