/** The push deliverer (issue 24): order per pair, backoff with full jitter, failed once out of retries, leases. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { deliveryRequest, PushDelivery, type PushOutbox } from '../../src/runtime/push-delivery.js';
import { poll } from '../support/wait.js';
import type { PendingDelivery } from '../../src/ports.js';

interface Row {
  generation: number;
  attempts: number;
  firstAttemptMs?: number;
  nextAttemptMs: number;
  state: 'pending' | 'failed';
}

const config = {
  taskId: 't1',
  id: 'c1',
  url: 'https://example.com/hook?secret=s3cr3t',
  token: 'tok-123',
  authentication: { scheme: 'Bearer', credentials: 'cred-456' },
};

/** An outbox in memory, one pair. */
function memoryOutbox(generations: number[]) {
  const rows: Row[] = generations.map((generation) => ({
    generation,
    attempts: 0,
    nextAttemptMs: 0,
    state: 'pending',
  }));
  const failures: Array<{ generation: number; attempts: number; nextAttemptMs?: number }> = [];
  const pending = () => rows.filter((r) => r.state === 'pending').sort((a, b) => a.generation - b.generation);
  const outbox: PushOutbox = {
    heads: async (nowMs) => {
      const first = pending()[0];
      return first && first.nextAttemptMs <= nowMs
        ? [{ taskId: 't1', configId: 'c1', generation: first.generation, nextAttemptMs: first.nextAttemptMs }]
        : [];
    },
    nextDueAfter: async (nowMs) => {
      const first = pending()[0];
      return first && first.nextAttemptMs > nowMs ? first.nextAttemptMs : undefined;
    },
    due: async (_t, _c, nowMs, limit) => {
      const list = pending();
      if (!list[0] || list[0].nextAttemptMs > nowMs) return [];
      return list.slice(0, limit).map((r) => ({
        config,
        generation: r.generation,
        eventJson: JSON.stringify({ statusUpdate: { taskId: 't1', metadata: { a: 1 } } }),
        attempts: r.attempts,
        firstAttemptMs: r.firstAttemptMs,
      }));
    },
    delivered: async (_t, _c, generations) => {
      for (const g of generations)
        rows.splice(
          rows.findIndex((r) => r.generation === g),
          1,
        );
    },
    attemptFailed: async (_t, _c, generation, attempt) => {
      const row = rows.find((r) => r.generation === generation)!;
      row.attempts = attempt.attempts;
      row.firstAttemptMs = attempt.firstAttemptMs;
      if (attempt.nextAttemptMs === undefined) row.state = 'failed';
      else row.nextAttemptMs = attempt.nextAttemptMs;
      failures.push({ generation, attempts: attempt.attempts, nextAttemptMs: attempt.nextAttemptMs });
    },
  };
  return { outbox, rows, failures };
}

function leases() {
  const held = new Set<string>();
  return {
    held,
    acquirePush: async (taskId: string, configId: string) =>
      !held.has(`${taskId} ${configId}`) && (held.add(`${taskId} ${configId}`), true),
    releasePush: async (taskId: string, configId: string) => void held.delete(`${taskId} ${configId}`),
  };
}

describe('issue 24: the push deliverer', () => {
  it('issue 24: the body is the event with its generation in its metadata (and a header); token and credentials in headers', () => {
    const delivery: PendingDelivery = {
      config,
      generation: 7,
      eventJson: JSON.stringify({ statusUpdate: { taskId: 't1', metadata: { a: 1 } } }),
      attempts: 0,
      firstAttemptMs: undefined,
    };
    const { body, headers } = deliveryRequest(delivery);
    assert.deepEqual(JSON.parse(body), {
      statusUpdate: { taskId: 't1', metadata: { a: 1, 'tiny-harness/generation': 7 } },
    });
    assert.deepEqual(headers, {
      'Content-Type': 'application/json',
      'X-Tiny-Harness-Generation': '7',
      'X-A2A-Notification-Token': 'tok-123',
      Authorization: 'Bearer cred-456',
    });
  });

  it("issue 24: a command reply's metadata stays exactly the extension's (CMD-4): its generation is in the header only", () => {
    const delivery: PendingDelivery = {
      config,
      generation: 9,
      eventJson: JSON.stringify({ statusUpdate: { taskId: 't1', metadata: { command: 'status' } } }),
      attempts: 0,
      firstAttemptMs: undefined,
    };
    const { body, headers } = deliveryRequest(delivery);
    assert.deepEqual(JSON.parse(body), { statusUpdate: { taskId: 't1', metadata: { command: 'status' } } });
    assert.equal(headers['X-Tiny-Harness-Generation'], '9');
  });

  it('issue 24: delivers a pair in order; a failure waits a jittered, doubling backoff; out of retries it is kept as failed and logged without secrets', async (t) => {
    let now = 1_000_000;
    const { outbox, rows, failures } = memoryOutbox([1, 2, 3]);
    const sent: number[] = [];
    let failing = true;
    const logged: string[] = [];
    const outcomes: string[] = [];
    const deliverer = new PushDelivery({
      outbox,
      leases: leases(),
      send: async (delivery) => {
        sent.push(delivery.generation);
        if (failing && delivery.generation === 2) throw new Error('the receiver answered HTTP 503');
      },
      // Waits (random 1: the whole ceiling): 1000, 2000, then 3000 (the most), which passes the 8 s.
      retry: { retryForMs: 8000, firstRetryMs: 1000, maxRetryMs: 3000 },
      log: {
        debug() {},
        info() {},
        error() {},
        warn: (message, fields) => logged.push(`${message} ${JSON.stringify(fields)}`),
      },
      now: () => now,
      random: () => 1,
      pollMs: 10,
      onAttempt: (outcome) => outcomes.push(outcome),
    });
    t.after(() => deliverer.stop());
    deliverer.start();
    await poll('the first failure', () => failures.length === 1);
    assert.deepEqual(sent, [1, 2]);
    assert.deepEqual(failures[0], { generation: 2, attempts: 1, nextAttemptMs: now + 1000 });
    // Not due yet: nothing more is sent, generation 3 waits behind 2.
    for (const wait of [2000, 4000]) {
      now += wait;
      await poll('the next failure', () => failures.length === (wait === 2000 ? 2 : 3));
    }
    assert.deepEqual(
      failures.map((f) => f.nextAttemptMs),
      [1_001_000, 1_004_000, undefined],
    );
    assert.equal(rows.find((r) => r.generation === 2)!.state, 'failed');
    await poll('generation 3 delivered after 2 was given up', () => sent.at(-1) === 3);
    assert.deepEqual(sent, [1, 2, 2, 2, 3]);
    assert.deepEqual(
      outcomes,
      ['delivered', 'failed', 'failed', 'gave_up', 'delivered'],
      'each attempt told (metrics)',
    );
    assert.equal(logged.length, 1);
    assert.match(logged[0]!, /ran out of retries/);
    for (const secret of ['s3cr3t', 'tok-123', 'cred-456', 'example.com'])
      assert.ok(!logged[0]!.includes(secret), secret);
    failing = false;
  });

  it('issue 24: a pair whose lease another instance holds is not delivered here', async (t) => {
    const { outbox } = memoryOutbox([1]);
    const held = leases();
    held.held.add('t1 c1');
    let sends = 0;
    const deliverer = new PushDelivery({
      outbox,
      leases: held,
      send: async () => void sends++,
      retry: { retryForMs: 10_000, firstRetryMs: 1000, maxRetryMs: 3000 },
      log: { debug() {}, info() {}, error() {}, warn() {} },
      pollMs: 5,
    });
    t.after(() => deliverer.stop());
    deliverer.start();
    let passes = 0;
    const heads = outbox.heads;
    outbox.heads = (nowMs, limit) => (passes++, heads(nowMs, limit));
    await poll('a few passes', () => passes >= 3);
    assert.equal(sends, 0);
    held.held.delete('t1 c1');
    await poll('delivered once the lease is free', () => sends === 1);
  });

  it('issue 33: alone (no poll), the outbox is read at each retry of a dead receiver and never while nothing is due', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const settle = async () => {
      for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    };
    let now = 0;
    const { outbox, rows } = memoryOutbox([1, 2]);
    let reads = 0;
    const heads = outbox.heads;
    outbox.heads = (nowMs, limit) => (reads++, heads(nowMs, limit));
    const deliverer = new PushDelivery({
      outbox,
      leases: leases(),
      send: async () => {
        throw new Error('connect ECONNREFUSED');
      },
      // Waits (random 1): 1 s, 2 s, 4 s; the fourth attempt, at 7 s, passes the 10 s and gives up.
      retry: { retryForMs: 10_000, firstRetryMs: 1000, maxRetryMs: 8000 },
      log: { debug() {}, info() {}, error() {}, warn() {} },
      now: () => now,
      random: () => 1,
    });
    t.after(() => deliverer.stop());
    const advance = async (ms: number) => {
      now += ms;
      t.mock.timers.tick(ms);
      await settle();
    };
    deliverer.start();
    await advance(0);
    const attempts = () => rows.find((r) => r.generation === 1)?.attempts ?? 0;
    assert.equal(attempts(), 1);
    for (let second = 1; second <= 7; second++) await advance(1000);
    assert.equal(attempts(), 4, 'tried at 0, 1, 3 and 7 s');
    assert.equal(rows.find((r) => r.generation === 1)!.state, 'failed');
    const readsWhileRetrying = reads;
    assert.ok(readsWhileRetrying <= 2 * 4 + 2, `the outbox read about once per attempt (${readsWhileRetrying})`);
    // Generation 2 then goes the same way; once it has failed too, nothing is due.
    for (let second = 0; second < 8; second++) await advance(1000);
    assert.equal(rows.filter((r) => r.state === 'failed').length, 2);
    const idle = reads;
    for (let minute = 0; minute < 10; minute++) await advance(60_000);
    assert.equal(reads, idle, 'ten idle minutes: the outbox was not read once');
  });
});
