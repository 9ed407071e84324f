/**
 * Prometheus metrics at GET /metrics (docs/operations.md, "Metrics"), end to end: a known
 * workload over the three transports, then the scraped text parsed strictly and its counts
 * checked; the scrape token, a port of its own, metrics off.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState, type Task } from '@a2a-js/sdk';
import { parseConfig } from '../../src/config/load.js';
import { startHarness } from '../../src/harness.js';
import { startMcpHttpServer, type RunningMcpHttpServer } from '../fixtures/mcp-server.js';
import { lastMessage } from '../fixtures/model-server.js';
import { collect, send, sendStream, startTestHarness, type TestHarness } from '../e2e/support.js';
import { poll } from '../support/wait.js';
import { labelValues, parseExposition, valueOf, type Family } from './exposition.js';

async function scrape(url: string, headers: Record<string, string> = {}): Promise<Map<string, Family>> {
  const response = await fetch(url, { headers });
  assert.equal(response.status, 200, `GET ${url}`);
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return parseExposition(await response.text());
}

describe('metrics after a known workload', () => {
  let web: RunningMcpHttpServer;
  let h: TestHarness;
  const ids = new Set<string>();
  let families: Map<string, Family>;

  before(async () => {
    web = await startMcpHttpServer();
    h = await startTestHarness({
      config: { mcpServers: { web: { url: web.url } } },
      script: {
        toolCalls: (body) => {
          const last = lastMessage(body);
          return last.role === 'user' && last.content.includes('please echo')
            ? [{ name: 'web_echo', arguments: { text: 'hi' } }]
            : undefined;
        },
        fail: (body) =>
          lastMessage(body).content.includes('please fail') ? { kind: 'status', status: 400 } : undefined,
        reply: 'fine',
      },
    });
    const note = (task: { id: string; contextId: string }) => ids.add(task.id).add(task.contextId);
    const jsonRpc = await h.client('JSONRPC');
    const rest = await h.client('HTTP+JSON');
    const grpc = await h.client('GRPC');
    const first = await send(jsonRpc, 'hello');
    note(first);
    const streamed = await collect(sendStream(rest, 'please echo'));
    note(streamed.at(-1)!.payload!.value as Task);
    note(await send(grpc, '/status', { taskId: first.id, contextId: first.contextId }));
    note(await grpc.getTask({ tenant: '', id: first.id, historyLength: undefined }));
    await assert.rejects(jsonRpc.getTask({ tenant: '', id: 'no-such-task', historyLength: undefined }));
    const failed = await send(jsonRpc, 'please fail');
    assert.equal(failed.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    note(failed);
    // The stream's own count is taken as its generator ends, just after its last event.
    families = await poll('the stream counted', async () => {
      const now = await scrape(h.harness.metricsUrl!);
      return valueOf(now, 'tiny_harness_a2a_requests_total', { method: 'SendStreamingMessage' }) === 1 && now;
    });
  });

  after(async () => {
    await h?.close();
    await web?.close();
  });

  it('the text parses as the exposition format, every family named tiny_harness_*, process metrics included', () => {
    for (const name of families.keys()) assert.match(name, /^tiny_harness_[a-z0-9_]+$/);
    assert.ok(families.has('tiny_harness_process_cpu_user_seconds_total'));
    assert.ok(families.has('tiny_harness_nodejs_eventloop_lag_seconds'));
    assert.equal(families.get('tiny_harness_a2a_requests_total')?.type, 'counter');
    assert.equal(families.get('tiny_harness_gen_ai_client_token_usage')?.type, 'histogram');
  });

  it('A2A calls of all three transports are counted by method and outcome, and timed', () => {
    const requests = (labels: Record<string, string>) => valueOf(families, 'tiny_harness_a2a_requests_total', labels);
    assert.equal(requests({ method: 'SendMessage', outcome: 'ok' }), 3, 'two turns and a command');
    assert.equal(requests({ method: 'SendStreamingMessage', outcome: 'ok' }), 1);
    assert.equal(requests({ method: 'GetTask', outcome: 'ok' }), 1);
    assert.equal(requests({ method: 'GetTask', outcome: 'TaskNotFoundError' }), 1);
    assert.equal(requests({}), 6);
    for (const method of ['SendMessage', 'SendStreamingMessage', 'GetTask'])
      assert.equal(
        valueOf(families, 'tiny_harness_a2a_request_duration_seconds_count', { method }),
        requests({ method }),
        `every ${method} call is timed once`,
      );
    assert.equal(valueOf(families, 'tiny_harness_open_streams'), 0, 'no stream is open any more');
  });

  it('turns are counted by how they ended, none still running; a command is no turn', () => {
    const turns = (labels: Record<string, string>) => valueOf(families, 'tiny_harness_turns_total', labels);
    assert.equal(turns({ state: 'input_required', reason: 'replied' }), 2);
    assert.equal(turns({ state: 'input_required', reason: 'model_failure' }), 1);
    assert.equal(turns({}), 3);
    assert.equal(valueOf(families, 'tiny_harness_turn_duration_seconds_count'), 3);
    assert.equal(valueOf(families, 'tiny_harness_running_turns'), 0);
  });

  it('model requests: duration by outcome, tokens by type (GenAI names), time to the first token', () => {
    const model = { gen_ai_provider_name: 'fixture', gen_ai_request_model: 'small' };
    const duration = 'tiny_harness_gen_ai_client_operation_duration_seconds_count';
    assert.equal(valueOf(families, duration, { ...model, outcome: 'ok' }), 2);
    assert.equal(valueOf(families, duration, { ...model, outcome: 'error' }), 1);
    const usage = 'tiny_harness_gen_ai_client_token_usage';
    assert.equal(valueOf(families, `${usage}_count`, { ...model, gen_ai_token_type: 'input' }), 2);
    assert.equal(valueOf(families, `${usage}_count`, { ...model, gen_ai_token_type: 'output' }), 2);
    assert.ok(valueOf(families, `${usage}_sum`, { gen_ai_token_type: 'input' }) > 0);
    assert.equal(valueOf(families, 'tiny_harness_turn_time_to_first_token_seconds_count', model), 2);
  });

  it('tool calls by tool and outcome; store transactions; no lease taken over', () => {
    assert.equal(valueOf(families, 'tiny_harness_tool_calls_total', { tool: 'web_echo', outcome: 'succeeded' }), 1);
    assert.equal(valueOf(families, 'tiny_harness_tool_calls_total'), 1);
    assert.equal(valueOf(families, 'tiny_harness_tool_call_duration_seconds_count', { tool: 'web_echo' }), 1);
    assert.ok(valueOf(families, 'tiny_harness_store_transaction_duration_seconds_count', { outcome: 'commit' }) > 0);
    assert.equal(valueOf(families, 'tiny_harness_turn_leases_taken_over_total'), 0);
    assert.equal(
      valueOf(families, 'tiny_harness_push_deliveries_pruned_total'),
      0,
      'issue 33: shown before any pruning',
    );
  });

  it('no label holds a task or context id', () => {
    assert.ok(ids.size >= 6, 'the workload saw its tasks and contexts');
    const values = labelValues(families);
    for (const id of ids) assert.ok(!values.has(id), `a label holds the id ${id}`);
    for (const value of values)
      assert.doesNotMatch(value, /^[0-9a-f]{8}-[0-9a-f]{4}-/, `a label looks like an id: ${value}`);
  });
});

describe('where and to whom the metrics are served', () => {
  it('metrics.tokenEnv: a scrape needs that token, and the A2A tokens neither open /metrics nor are needed for it', async () => {
    const h = await startTestHarness({
      config: { metrics: { tokenEnv: 'SCRAPE_TOKEN' } },
      harness: { env: { SCRAPE_TOKEN: 'scrape-secret' }, auth: { tokens: new Map([['a2a-secret', 'alice']]) } },
    });
    try {
      const url = h.harness.metricsUrl!;
      assert.equal(url, `${h.harness.url}/metrics`);
      for (const authorization of [undefined, 'Bearer wrong', 'Bearer a2a-secret', 'scrape-secret']) {
        const response = await fetch(url, { headers: authorization ? { authorization } : {} });
        assert.equal(response.status, 401, `refused with ${authorization ?? 'no header'}`);
        assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer/);
        assert.doesNotMatch(await response.text(), /tiny_harness_/);
      }
      await scrape(url, { authorization: 'Bearer scrape-secret' });
      const a2a = await fetch(`${h.harness.url}/a2a/jsonrpc`, {
        method: 'POST',
        headers: { authorization: 'Bearer scrape-secret', 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }),
      });
      assert.equal(a2a.status, 401, 'the scrape token opens no A2A route');
    } finally {
      await h.close();
    }
  });

  it('metrics.tokenEnv naming an unset variable stops the start, saying which', async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tiny-harness-metrics-'));
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    const config = parseConfig(JSON.stringify({ detectOllama: false, metrics: { tokenEnv: 'NOT_SET_ANYWHERE' } }));
    await assert.rejects(
      startHarness({ config, dataDir, host: '127.0.0.1', port: 0, env: {} }),
      (error: Error & { code?: string }) => error.code === 'config_invalid' && /NOT_SET_ANYWHERE/.test(error.message),
    );
  });

  it('metrics.port: /metrics on its own port only, nothing else there', async () => {
    const h = await startTestHarness({ config: { metrics: { port: 0, host: '127.0.0.1' } } });
    try {
      const url = new URL(h.harness.metricsUrl!);
      assert.equal(url.pathname, '/metrics');
      assert.notEqual(url.port, new URL(h.harness.url).port);
      const families = await scrape(url.href);
      assert.ok(families.has('tiny_harness_a2a_requests_total'));
      assert.equal((await fetch(`${h.harness.url}/metrics`)).status, 404, 'not on the A2A port');
      assert.equal((await fetch(new URL('/other', url))).status, 404);
    } finally {
      await h.close();
    }
  });

  it('metrics.enabled false: no /metrics, nothing counted', async () => {
    const h = await startTestHarness({ config: { metrics: { enabled: false } } });
    try {
      assert.equal(h.harness.metricsUrl, undefined);
      await send(await h.client('JSONRPC'), 'hello');
      const response = await fetch(`${h.harness.url}/metrics`);
      assert.equal(response.status, 404);
    } finally {
      await h.close();
    }
  });
});
