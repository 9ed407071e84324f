/**
 * Issue 24 across a restart of the one instance (SQLite): the task's log and the deliveries it
 * owes are on disk, so a stream resumes after the restart from the last event seen, and push
 * deliveries owed before it are made after it.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RESUMED_AFTER_KEY } from '../../src/wire.js';
import { collect, generationIn, sendStream, startTestHarness, userMessage, type TestHarness } from './support.js';
import { deduped, startReceiver, type Receiver } from './push-receiver.js';
import { poll } from '../support/wait.js';

const REPLY = 'one two three four five six';
const PUSH = { push: { allowPrivateNetworks: true, firstRetryMs: 20, maxRetryMs: 200 } };

describe('the task log across a restart (issue 24)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tiny-harness-log-restart-'));
  const started: TestHarness[] = [];
  const receivers: Receiver[] = [];
  const start = async () => {
    const h = await startTestHarness({ dataDir, script: { reply: REPLY }, config: PUSH });
    started.push(h);
    return h;
  };

  after(async () => {
    for (const h of started) await h.close().catch(() => undefined);
    await Promise.all(receivers.map((r) => r.close()));
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('issue 24: a stream cut before a restart resumes after it from the last event seen, none missing, none twice', async () => {
    const first = await start();
    const client = await first.client('JSONRPC');
    const whole = await collect(sendStream(client, 'tell me'));
    const taskId = (whole[0]!.payload!.value as { id: string }).id;
    const seen = whole.slice(0, 2);
    await first.close();

    const second = await start();
    const again = await second.client('GRPC');
    const [task, ...rest] = await collect(
      again.resubscribeTask(
        { tenant: '', id: taskId },
        { serviceParameters: { 'last-event-id': String(generationIn(seen.at(-1)!)) } },
      ),
    );
    assert.equal((task!.payload!.value as { metadata: Record<string, unknown> }).metadata[RESUMED_AFTER_KEY], 2);
    assert.deepEqual([...seen, ...rest].map(generationIn), whole.map(generationIn));
  });

  it('issue 24: deliveries owed to a receiver that was down are made after a restart, in order, each event at least once', async () => {
    const r = await startReceiver('down');
    receivers.push(r);
    const first = await start();
    const client = await first.client('HTTP+JSON');
    const events = await collect(
      client.sendMessageStream({
        tenant: '',
        message: userMessage('hello'),
        configuration: {
          acceptedOutputModes: [],
          taskPushNotificationConfig: {
            tenant: '',
            id: 'restart',
            taskId: '',
            url: r.url,
            token: '',
            authentication: undefined,
          },
          returnImmediately: false,
        },
        metadata: {},
      }),
    );
    await poll('a refused attempt', () => r.arrived >= 1);
    await first.close();

    r.mode = 'ok';
    await start();
    const last = generationIn(events.at(-1)!);
    await poll('every event delivered after the restart', () => deduped(r.received).some((x) => x.generation === last));
    assert.deepEqual(
      deduped(r.received).map((x) => x.generation),
      events.map(generationIn),
    );
  });
});
