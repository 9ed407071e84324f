/**
 * The metering wrappers and the store's transaction timing, each alone: how a turn's end is
 * read, what a model request and a tool call record when they fail or are aborted, and that a
 * rolled-back transaction is told apart from a committed one on both stores.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState } from '@a2a-js/sdk';
import { sql } from 'kysely';
import { TurnCanceled, TurnStopped, TurnUnwritten } from '../../src/runtime/turn/turns.js';
import { AWAITING_APPROVAL_NOTICE, NOTICE_KEY } from '../../src/wire.js';
import { meteredGateway, meteredTools, meteredTurns, turnReason } from '../../src/telemetry/metered.js';
import { HarnessMetrics } from '../../src/telemetry/metrics.js';
import { storeBackends, tempStore } from '../store/helpers.js';
import { parseExposition, valueOf } from './exposition.js';

async function read(metrics: HarnessMetrics) {
  return parseExposition((await metrics.scrape()).text);
}

const ended = (state: TaskState, notice?: string) => ({
  final: { status: { state, message: { metadata: notice ? { [NOTICE_KEY]: notice } : {} } } },
});

function aborted(reason?: Error): AbortSignal {
  const controller = new AbortController();
  if (reason) controller.abort(reason);
  return controller.signal;
}

describe('how a turn ended, as turns_total counts it', () => {
  it('reads the notice of its final message, a /stop or a failed write (the reply kept) from its abort reason, and no final status as fenced', () => {
    const waiting = TaskState.TASK_STATE_INPUT_REQUIRED;
    assert.equal(turnReason(ended(waiting), aborted()), 'replied');
    assert.equal(turnReason(ended(waiting), aborted(new TurnStopped())), 'stopped');
    assert.equal(turnReason(ended(TaskState.TASK_STATE_CANCELED, 'canceled'), aborted(new TurnCanceled())), 'canceled');
    assert.equal(turnReason(ended(waiting, 'interrupted'), aborted()), 'interrupted');
    assert.equal(turnReason(ended(waiting, 'model-failure'), aborted()), 'model_failure');
    assert.equal(turnReason(ended(TaskState.TASK_STATE_FAILED, 'store-failure'), aborted()), 'store_failure');
    assert.equal(turnReason(ended(waiting), aborted(new TurnUnwritten())), 'store_failure');
    assert.equal(turnReason(ended(waiting, AWAITING_APPROVAL_NOTICE), aborted()), 'awaiting_approval');
    assert.equal(turnReason({}, aborted()), 'fenced');
  });

  it('a turn is running from its start to its end, and counted by state and reason', async () => {
    const metrics = new HarnessMetrics();
    let release!: () => void;
    const runner = meteredTurns(
      {
        run: (_request: string, _turn: { abort: AbortController }, _publisher: null) =>
          new Promise<ReturnType<typeof ended>>(
            (resolve) => (release = () => resolve(ended(TaskState.TASK_STATE_COMPLETED))),
          ),
      },
      metrics,
    );
    const running = runner.run('go', { abort: new AbortController() }, null);
    assert.equal(valueOf(await read(metrics), 'tiny_harness_running_turns'), 1);
    release();
    await running;
    const families = await read(metrics);
    assert.equal(valueOf(families, 'tiny_harness_running_turns'), 0);
    assert.equal(valueOf(families, 'tiny_harness_turns_total', { state: 'completed', reason: 'replied' }), 1);
  });
});

describe('model requests and tool calls', () => {
  it('an aborted model request is timed as aborted, a failed one as error; no usage, no tokens; empty text is no first token', async () => {
    const metrics = new HarnessMetrics();
    const gateway = meteredGateway(
      {
        complete: async (request: { modelId: string; abortSignal: AbortSignal; onText: (delta: string) => void }) => {
          request.onText('');
          if (request.abortSignal.aborted) throw request.abortSignal.reason;
          if (request.modelId.endsWith('broken')) throw new Error('refused');
          return { inputTokens: 0, outputTokens: 0 };
        },
      },
      metrics,
    );
    const request = (modelId: string, signal = aborted()) => ({ modelId, abortSignal: signal, onText: () => {} });
    await assert.rejects(gateway.complete(request('local:m', aborted(new TurnCanceled()))));
    await assert.rejects(gateway.complete(request('local:broken')));
    await gateway.complete(request('local:m'));
    const families = await read(metrics);
    const duration = 'tiny_harness_gen_ai_client_operation_duration_seconds_count';
    assert.equal(valueOf(families, duration, { gen_ai_request_model: 'm', outcome: 'aborted' }), 1);
    assert.equal(valueOf(families, duration, { gen_ai_request_model: 'broken', outcome: 'error' }), 1);
    assert.equal(valueOf(families, duration, { gen_ai_provider_name: 'local', outcome: 'ok' }), 1);
    assert.equal(valueOf(families, 'tiny_harness_gen_ai_client_token_usage_count'), 0);
    assert.equal(valueOf(families, 'tiny_harness_turn_time_to_first_token_seconds_count'), 0);
  });

  it('a tool call is counted by its outcome, one that throws as failed', async () => {
    const metrics = new HarnessMetrics();
    const tools = meteredTools(
      {
        list: async (): Promise<{
          tools: { name: string; call(input: unknown, signal: AbortSignal): Promise<{ status: string }> }[];
          missing: string[];
        }> => ({
          tools: [
            { name: 'fx_ok', call: async () => ({ status: 'succeeded' }) },
            { name: 'fx_no', call: async () => ({ status: 'canceled' }) },
            {
              name: 'fx_bug',
              call: async () => {
                throw new Error('bug');
              },
            },
          ],
          missing: ['down'],
        }),
      },
      metrics,
    );
    const listed = await tools.list();
    assert.deepEqual(listed.missing, ['down'], 'what else the list says is kept');
    const [ok, no, bug] = listed.tools;
    await ok!.call({}, aborted());
    await no!.call({}, aborted());
    await assert.rejects(bug!.call({}, aborted()));
    const families = await read(metrics);
    assert.equal(valueOf(families, 'tiny_harness_tool_calls_total', { tool: 'fx_ok', outcome: 'succeeded' }), 1);
    assert.equal(valueOf(families, 'tiny_harness_tool_calls_total', { tool: 'fx_no', outcome: 'canceled' }), 1);
    assert.equal(valueOf(families, 'tiny_harness_tool_calls_total', { tool: 'fx_bug', outcome: 'failed' }), 1);
  });

  it('without metrics, each wrapper gives back what it was given', () => {
    const box = { list: async () => ({ tools: [], missing: [] }) };
    assert.equal(meteredTools(box, undefined), box);
  });
});

for (const backend of storeBackends) {
  describe(`store transactions on ${backend.name}`, backend.needs, () => {
    it('each transaction is told once, committed or rolled back', async () => {
      const told: boolean[] = [];
      const temp = await tempStore(backend, {
        onTransaction: (seconds, committed) => told.push(committed && seconds >= 0),
      });
      try {
        told.length = 0;
        await temp.store.db.transaction().execute(async (trx) => sql`select 1`.execute(trx));
        await assert.rejects(
          temp.store.db.transaction().execute(async (trx) => {
            await sql`select 1`.execute(trx);
            throw new Error('rolled back');
          }),
        );
        assert.deepEqual(told, [true, false]);
      } finally {
        await temp.dispose();
      }
    });
  });
}
