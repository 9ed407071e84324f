/**
 * Export, end to end: the command line (`serve`, the built bundle) in a child process with only
 * OpenTelemetry's standard variables set, sending OTLP/HTTP JSON to a receiver written here on
 * 127.0.0.1; a streamed turn, then SIGTERM, which flushes the spans before the process exits.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { startModelServer, type RunningModelServer } from '../fixtures/model-server.js';
import { startServerProcess, writeFixtureConfig, type ServerProcess } from '../e2e/process.js';
import { collect, createClient, sendStream } from '../e2e/support.js';
import { waitFor } from '../support/wait.js';

/** An OTLP/HTTP receiver of traces in JSON: keeps each `POST /v1/traces` body, announces each with `'body'`. */
async function startReceiver() {
  const bodies: any[] = [];
  const events = new EventEmitter();
  const contentTypes: string[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') {
        contentTypes.push(String(req.headers['content-type']));
        bodies.push(JSON.parse(raw));
        events.emit('body');
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } else res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    events,
    contentTypes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Every span the receiver got, with its resource's service name. */
function receivedSpans(bodies: any[]): { name: string; service: string; attributes: Record<string, unknown> }[] {
  return bodies.flatMap((body) =>
    (body.resourceSpans ?? []).flatMap((resourceSpans: any) => {
      const service = resourceSpans.resource?.attributes?.find((a: any) => a.key === 'service.name')?.value
        ?.stringValue;
      return (resourceSpans.scopeSpans ?? []).flatMap((scope: any) =>
        (scope.spans ?? []).map((span: any) => ({
          name: span.name,
          service,
          attributes: Object.fromEntries(
            (span.attributes ?? []).map((a: any) => [a.key, Object.values(a.value ?? {})[0]]),
          ),
        })),
      );
    }),
  );
}

let receiver: Awaited<ReturnType<typeof startReceiver>>;
let model: RunningModelServer;
let dir: string;
let server: ServerProcess | undefined;

before(async () => {
  receiver = await startReceiver();
  model = await startModelServer({});
  dir = mkdtempSync(join(tmpdir(), 'tiny-harness-otlp-'));
});

after(async () => {
  await server?.stop('SIGKILL');
  await model?.close();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('traces exported over OTLP', () => {
  it('TRACE-6: with only the standard variables set, serve exports its spans (http/json) with the service name, flushed on SIGTERM', async () => {
    const configFile = writeFixtureConfig(dir, model.baseURL);
    server = await startServerProcess(['--data-dir', join(dir, 'data'), '--config', configFile], {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'traces-under-test',
    });
    const client = await createClient(server.url, 'JSONRPC');
    const events = await collect(sendStream(client, 'hello over otlp'));
    const final = events.at(-1)!.payload!.value as any;
    assert.equal(final.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(await server.stop('SIGTERM'), 0, 'the harness stops cleanly');
    const names = () => receivedSpans(receiver.bodies).map((span) => span.name);
    // The export was flushed before the process exited; wait on the receiver's events, not a clock.
    await waitFor(
      'the spans of the turn',
      receiver.events,
      'body',
      () => names().includes('invoke_agent tiny-harness'),
      {
        seen: names,
      },
    );
    const spans = receivedSpans(receiver.bodies);
    const turn = spans.find((span) => span.name === 'invoke_agent tiny-harness')!;
    assert.equal(turn.service, 'traces-under-test');
    assert.equal(turn.attributes['gen_ai.agent.a2a.task_id'], final.taskId);
    assert.equal(turn.attributes['gen_ai.conversation.id'], final.contextId);
    for (const name of ['SendStreamingMessage', 'chat small'])
      assert.ok(names().includes(name), `${name} arrived: ${names().join(', ')}`);
    assert.ok(
      receiver.contentTypes.every((type) => type.startsWith('application/json')),
      `sent as JSON: ${receiver.contentTypes}`,
    );
  });
});
