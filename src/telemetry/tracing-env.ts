/**
 * Whether the environment asks for traces: one of OpenTelemetry's standard variables for an
 * exporter's endpoint, the service or the sampler is set, and `OTEL_SDK_DISABLED` is not true.
 * Read before anything of OpenTelemetry's SDK is loaded: without them, none of it is.
 */
const TRACING_VARIABLES = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
  'OTEL_SERVICE_NAME',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_EXPORTER',
];

export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return false;
  return TRACING_VARIABLES.some((name) => (env[name] ?? '').trim() !== '');
}
