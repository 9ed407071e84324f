import { Server, ServerCredentials } from '@grpc/grpc-js';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { A2AService, grpcService, UserBuilder } from '@a2a-js/sdk/server/grpc';

export interface RunningGrpcServer {
  /** host:port as clients dial it. */
  address: string;
  close(): Promise<void>;
}

/** Serves the A2A gRPC binding on its own port (gRPC needs HTTP/2, express does not speak it). */
export async function startGrpcServer(handler: A2ARequestHandler, host: string, port: number): Promise<RunningGrpcServer> {
  const server = new Server();
  server.addService(A2AService, grpcService({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  const boundPort = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound)));
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
