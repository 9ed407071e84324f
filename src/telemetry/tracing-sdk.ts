/**
 * OpenTelemetry's Node SDK, started for traces alone: it reads the standard variables itself
 * (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_PROTOCOL`, `OTEL_SERVICE_NAME`,
 * `OTEL_TRACES_SAMPLER`, ...), registers the W3C propagator and the context manager that carries
 * the active span across `await`, and exports spans in batches. Loaded by `serve.ts` only when
 * the environment asks for traces (`tracing-env.ts`): otherwise nothing of the SDK is loaded.
 * Metrics are not exported here (Prometheus' `/metrics` has them), nor logs. A failed export is
 * logged (`export-failures.ts`), unless `OTEL_LOG_LEVEL` asks for the SDK's own console logger.
 */
import { diag, DiagLogLevel } from '@opentelemetry/api';
import { NodeSDK, resources, type tracing } from '@opentelemetry/sdk-node';
import { silentLogger, type Logger } from '../log.js';
import { exportFailureLog } from './export-failures.js';

export interface Tracing {
  /** Exports the spans still waiting, then stops: called when the harness stops. */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** Where spans go instead of the exporter the variables name (tests: an in-memory exporter). */
  spanProcessors?: tracing.SpanProcessor[];
  env?: NodeJS.ProcessEnv;
  /** Where a failed export is told (a warning, then at most one a minute). */
  log?: Logger;
}

export function startTracing(options: TracingOptions = {}): Tracing {
  const env = options.env ?? process.env;
  const named =
    (env.OTEL_SERVICE_NAME ?? '').trim() !== '' || /(^|,)\s*service\.name=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  const sdk = new NodeSDK({
    ...(named ? {} : { serviceName: 'tiny-harness' }),
    // The process detector would export the command line, which may hold a database URL's password.
    resourceDetectors: [resources.envDetector, resources.hostDetector],
    metricReaders: [],
    logRecordProcessors: [],
    ...(options.spanProcessors ? { spanProcessors: options.spanProcessors } : {}),
  });
  if ((env.OTEL_LOG_LEVEL ?? '').trim() === '')
    diag.setLogger(exportFailureLog(options.log ?? silentLogger), {
      logLevel: DiagLogLevel.ERROR,
      suppressOverrideMessage: true,
    });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}
