/**
 * The last stage of start-up (`harness-stages.ts` has the others): the servers clients reach.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Commands } from './harness-stages.js';
import type { HarnessOptions } from './harness-options.js';
import type { Logger } from './log.js';
import { logAuthentication } from './server/auth.js';
import type { Admission } from './server/admission.js';
import type { RunningGrpcServer } from './server/grpc-server.js';
import { healthChecks, type Readiness } from './server/health.js';
import { createHttpApp } from './server/http-app.js';
import { formatHost, listen } from './server/listen.js';
import { bundledWebDir } from './server/web-page.js';
import { serveMetrics, type MetricsServer, type MetricsSetup } from './telemetry/metrics-endpoint.js';

/** The servers clients reach: HTTP (JSON-RPC, HTTP+JSON, the card, the page), and gRPC when asked for. */
export interface Transports {
  url: string;
  httpServer: Server;
  grpc?: RunningGrpcServer;
  /** `/metrics` on a port of its own (`metrics.port`). */
  metricsServer?: MetricsServer;
}

export async function startTransports(
  options: HarnessOptions,
  { requestPath, endpoints, authenticator, signer, schedules }: Commands,
  telemetry: MetricsSetup,
  log: Logger,
  { readiness, admission }: { readiness: Readiness; admission: Admission },
): Promise<Transports> {
  const probes = healthChecks(readiness);
  const metrics = await serveMetrics(telemetry, options.config.metrics, options.host, log, probes);
  let grpc: RunningGrpcServer | undefined;
  const httpServer = createServer();
  try {
    if (options.grpcPort !== undefined) {
      // Loaded only when asked for: gRPC's libraries take a sizeable part of start-up.
      const { startGrpcServer } = await import('./server/grpc-server.js');
      grpc = await startGrpcServer(requestPath.path, options.host, options.grpcPort, { log, authenticator, admission });
      endpoints.grpcAddress = grpc.address;
    }
    await listen(httpServer, options.host, options.port);
  } catch (error) {
    await grpc?.close();
    await metrics.apart?.close();
    throw error;
  }
  const url = `http://${formatHost(options.host)}:${(httpServer.address() as AddressInfo).port}`;
  endpoints.httpUrl = url;
  httpServer.on(
    'request',
    createHttpApp({
      path: requestPath.path,
      card: requestPath.card,
      bodyLimit: options.bodyLimit ?? '4mb',
      log,
      webDir: bundledWebDir(),
      authenticator,
      logContent: options.logContent,
      probes,
      admission,
      metrics: metrics.onAppPort,
      signer,
      hooks: schedules && { hooks: schedules.hooks, maxBytes: options.config.schedules.hookMaxBytes },
    }),
  );
  const publicUrl = options.publicUrl ?? options.config.publicUrl;
  if (publicUrl) log.info('the card names the public address', { url: publicUrl });
  logAuthentication(authenticator, options.host, log);
  return { url, httpServer, grpc, metricsServer: metrics.apart };
}
