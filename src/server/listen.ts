import type { Server } from 'node:http';

/**
 * Connections the OS may hold for the server before it accepts them. Node's default, 511, is
 * too few for a burst of clients while the event loop is busy: the rest are dropped and reset
 * after the kernel's retries (a 1,000-stream burst lost 20 to 40 streams that way). The OS
 * caps it at its own limit (net.core.somaxconn). Node takes one connection from it per turn of
 * the event loop (libuv since 1.45), so a loop kept busy lets it fill: admission (`admission.ts`)
 * refuses new load while the loop lags, to keep it moving.
 */
const LISTEN_BACKLOG = 4096;

/** Starts `server` listening; rejects with the error listening failed with. */
export function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, backlog: LISTEN_BACKLOG }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

/** A host as a URL writes it: an IPv6 address in brackets. */
export function formatHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}
