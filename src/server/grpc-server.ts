import { Server, ServerCredentials } from '@grpc/grpc-js';
import { silentLogger, type Logger } from '../log.js';
import type { Authenticator } from './authentication.js';
import { loadGrpcErrorForms } from './a2a-errors.js';
import { grpcBinding, type CallRunner } from './grpc-binding.js';
import type { Admission } from './admission.js';

export interface RunningGrpcServer {
  /** host:port as clients dial it. */
  address: string;
  close(): Promise<void>;
}

export interface GrpcServerOptions {
  log?: Logger;
  /** When set, every call needs a bearer token it knows (`grpc-binding.ts`). */
  authenticator?: Authenticator;
  /** Admits or refuses every call first (`admission.ts`), sharing the HTTP routes' bounds. */
  admission?: Admission;
}

/**
 * Serves the A2A gRPC binding (`grpc-binding.ts`) on its own port (gRPC needs HTTP/2, the HTTP
 * server does not speak it): every call runs through `path`, the composed request path.
 */
export async function startGrpcServer(
  path: CallRunner,
  host: string,
  port: number,
  options: GrpcServerOptions = {},
): Promise<RunningGrpcServer> {
  await loadGrpcErrorForms();
  const server = new Server();
  const { definition, implementation } = grpcBinding(path, {
    log: options.log ?? silentLogger,
    authenticator: options.authenticator,
    admission: options.admission,
  });
  server.addService(definition, implementation);
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
