import { Server, ServerCredentials, type UntypedServiceImplementation } from '@grpc/grpc-js';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { A2AService, grpcService } from '@a2a-js/sdk/server/grpc';
import { silentLogger, type Logger } from '../log.js';
import type { TokenAuthenticator } from './auth.js';
import { loadGrpcErrorForms } from './a2a-errors.js';
import { clientGoneContextBuilder, grpcGoneSignal, LAST_EVENT_ID_KEY, withClientGone } from '../a2a/index.js';
import { grpcUserBuilder, guardCalls } from './grpc-calls.js';
import { requireProtocolVersion } from './protocol-version.js';
import { TRACE_CARRIER_KEY, traceCarrier } from '../telemetry/propagation.js';
import { boundedDefinition } from './grpc-edge.js';
import { UnavailableForm } from './unavailable.js';
import type { Admission } from './admission.js';

export interface RunningGrpcServer {
  /** host:port as clients dial it. */
  address: string;
  close(): Promise<void>;
}

export interface GrpcServerOptions {
  log?: Logger;
  /** When set, every call needs a bearer token it knows (`grpc-calls.ts`). */
  authenticator?: TokenAuthenticator;
  /** Admits or refuses every call first (`admission.ts`), sharing the HTTP routes' bounds. */
  admission?: Admission;
}

/** Serves the A2A gRPC binding on its own port (gRPC needs HTTP/2, express does not speak it). */
export async function startGrpcServer(
  handler: A2ARequestHandler,
  host: string,
  port: number,
  options: GrpcServerOptions = {},
): Promise<RunningGrpcServer> {
  await loadGrpcErrorForms();
  const server = new Server();
  const service = grpcService({
    requestHandler: new UnavailableForm(handler, 'grpc'),
    userBuilder: withClientGone(grpcUserBuilder(options.authenticator), grpcGoneSignal, (call) => [
      [LAST_EVENT_ID_KEY, call.metadata.get('last-event-id')[0]],
      [TRACE_CARRIER_KEY, traceCarrier((name) => call.metadata.get(name)[0])],
    ]),
    contextBuilder: requireProtocolVersion(clientGoneContextBuilder),
  });
  // Requests are checked for nesting before they are decoded, for bytes that do not decode, then against the edge schema.
  server.addService(
    boundedDefinition(A2AService),
    guardCalls(A2AService, service as unknown as UntypedServiceImplementation, {
      log: options.log ?? silentLogger,
      authenticator: options.authenticator,
      admission: options.admission,
    }),
  );
  const boundPort = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    );
  });
  return {
    address: `${host}:${boundPort}`,
    close: () =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => server.forceShutdown(), 2000);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}
