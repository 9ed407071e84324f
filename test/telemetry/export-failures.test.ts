/**
 * A trace export that fails is logged (src/telemetry/export-failures.ts, tracing-sdk.ts): one
 * warning, then at most one an interval, counting the failures between; one line, without a
 * stack, a path or a URL's credentials. Before, an export to a dead endpoint logged nothing.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { trace } from '@opentelemetry/api';
import { createLogger } from '../../src/log.js';
import { exportFailureLog } from '../../src/telemetry/export-failures.js';
import { startTracing, type Tracing } from '../../src/telemetry/tracing-sdk.js';
import { waitFor } from '../support/wait.js';

/** A logger whose lines are kept, parsed, each announced with `'line'`. */
function capturedLog() {
  const lines: any[] = [];
  const events = new EventEmitter();
  const log = createLogger({
    pretty: false,
    write: (line) => {
      lines.push(JSON.parse(line));
      events.emit('line');
    },
  });
  return { log, lines, events };
}

/** How OpenTelemetry's global error handler hands an exception to `diag.error`: JSON of its fields, stack included. */
function asOtelReportsIt(error: Error & { code?: string }): string {
  return JSON.stringify({ stack: error.stack, message: error.message, code: error.code, name: error.name });
}

describe('trace export failures in the log', () => {
  it('the first failure is a warning at once; the next within the interval are counted, then told with the next line', () => {
    const { log, lines } = capturedLog();
    let now = 0;
    const diag = exportFailureLog(log, { intervalMs: 60_000, now: () => now });
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4318'), { code: 'ECONNREFUSED' });
    diag.error(asOtelReportsIt(refused));
    for (now = 1000; now < 60_000; now += 10_000) diag.error(asOtelReportsIt(refused));
    assert.equal(lines.length, 1, 'one line for seven failures within the interval');
    now = 60_000;
    diag.error(asOtelReportsIt(refused));
    assert.equal(lines.length, 2);
    for (const line of lines) {
      assert.equal(line.level, 'warn');
      assert.match(line.msg, /^exporting traces failed/);
      assert.equal(line.error, 'Error ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:4318');
    }
    assert.equal(lines[0].moreFailures, undefined);
    assert.equal(lines[1].moreFailures, 6);
  });

  it('one line without a stack, a path or the credentials of a URL; OpenTelemetry chatter below an error is dropped', () => {
    const { log, lines } = capturedLog();
    const diag = exportFailureLog(log);
    diag.warn('Dropped 3 spans because maxQueueSize reached');
    diag.info('starting');
    assert.equal(lines.length, 0);
    const leaky = new Error('Unauthorized for https://alice:s3cret@collector.example.com/v1/traces at /srv/app/x.js');
    diag.error(asOtelReportsIt(leaky));
    assert.equal(lines.length, 1);
    const text = JSON.stringify(lines[0]);
    assert.doesNotMatch(text, /s3cret|alice|\/srv\/app|at .*\.js:\d+/);
    assert.match(lines[0].error, /Unauthorized for https:\/\/\[redacted\]@collector\.example\.com/);
  });

  describe('through the SDK, to an endpoint that drops every connection', () => {
    let endpoint: Server;
    let attempts = 0;
    const attempted = new EventEmitter();
    const captured = capturedLog();
    let tracing: Tracing;
    const saved = { ...process.env };

    before(async () => {
      endpoint = createServer();
      endpoint.on('connection', (socket) => {
        attempts++;
        attempted.emit('attempt');
        socket.destroy();
      });
      await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
      Object.assign(process.env, {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://user:secret@127.0.0.1:${(endpoint.address() as AddressInfo).port}`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_TIMEOUT: '500',
        OTEL_BSP_SCHEDULE_DELAY: '20',
        OTEL_SERVICE_NAME: 'export-failure-test',
      });
      delete process.env.OTEL_LOG_LEVEL;
      tracing = startTracing({ log: captured.log });
    });

    after(async () => {
      await tracing?.shutdown().catch(() => undefined);
      await new Promise<void>((resolve) => endpoint.close(() => resolve()));
      process.env = saved;
    });

    it('a dead endpoint is logged once as a warning, however many batches fail after it', async () => {
      const tracer = trace.getTracer('export-failure-test');
      const spanEvery = setInterval(() => tracer.startSpan('work').end(), 10);
      try {
        await waitFor('the export failure logged', captured.events, 'line', () =>
          captured.lines.some((line) => /^exporting traces failed/.test(line.msg)),
        );
        const seen = attempts;
        await waitFor('three more exports tried', attempted, 'attempt', () => attempts >= seen + 3);
      } finally {
        clearInterval(spanEvery);
      }
      const failures = captured.lines.filter((line) => /^exporting traces failed/.test(line.msg));
      assert.equal(failures.length, 1, JSON.stringify(captured.lines));
      assert.equal(failures[0].level, 'warn');
      assert.doesNotMatch(JSON.stringify(captured.lines), /secret/);
    });
  });
});
