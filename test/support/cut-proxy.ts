/**
 * A TCP proxy on 127.0.0.1 in front of a server, whose connections a test can cut at once (a
 * dropped network), and whose target can change (the server restarted on another port). While
 * it has no target, connections are refused by closing them. `close()` ends everything.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface CutProxy {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Where connections go: `host:port`, or undefined to refuse them. */
  target: { host: string; port: number } | undefined;
  /** Connections made so far. */
  readonly connections: number;
  /** Destroys every open connection, both sides. */
  cut(): void;
  close(): Promise<void>;
}

export async function startCutProxy(): Promise<CutProxy> {
  const open = new Set<Socket>();
  let connections = 0;
  const proxy: CutProxy = {
    url: '',
    target: undefined,
    get connections() {
      return connections;
    },
    cut() {
      for (const socket of open) socket.destroy();
      open.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        proxy.cut();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((client) => {
    connections++;
    const target = proxy.target;
    if (!target) return void client.destroy();
    const upstream = connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        open.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}

/** Host and port of an `http://host:port` URL. */
export function hostPort(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port) };
}
