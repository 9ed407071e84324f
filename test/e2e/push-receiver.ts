/** A webhook receiver for push-notification tests: a real HTTP server on 127.0.0.1. */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';

export interface Received {
  headers: IncomingHttpHeaders;
  body: any;
  /** The event's generation, from its header (a command reply's metadata carries none, CMD-4). */
  generation: number;
  /** The `StreamResponse` case: task, statusUpdate, artifactUpdate. */
  kind: string;
}

export type ReceiverMode = 'ok' | 'down' | 'hang';

export interface Receiver {
  url: string;
  /** Every POST answered 2xx, in arrival order. */
  received: Received[];
  /** Every POST that arrived, whatever it was answered. */
  arrived: number;
  mode: ReceiverMode;
  /** Answers the POSTs held while hanging (with 200: they count as received). */
  release(): void;
  close(): Promise<void>;
}

export async function startReceiver(mode: ReceiverMode = 'ok'): Promise<Receiver> {
  const held: Array<() => void> = [];
  const receiver: Receiver = {
    url: '',
    received: [],
    arrived: 0,
    mode,
    release: () => held.splice(0).forEach((answer) => answer()),
    close: async () => {
      receiver.release();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      receiver.arrived++;
      const text = Buffer.concat(chunks).toString('utf8');
      const accept = (reply: ServerResponse) => {
        // A sender gone meanwhile (killed) never learns of it: not received.
        if (reply.destroyed || req.socket.destroyed) return;
        const body = JSON.parse(text);
        const kind = Object.keys(body)[0]!;
        receiver.received.push({
          headers: req.headers,
          body,
          kind,
          generation: Number(req.headers['x-tiny-harness-generation']),
        });
        reply.writeHead(200).end();
      };
      if (receiver.mode === 'down') res.writeHead(503).end();
      else if (receiver.mode === 'hang') held.push(() => accept(res));
      else accept(res);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return receiver;
}

/** The received generations, duplicates dropped as a receiver would, in arrival order. */
export function deduped(received: readonly Received[]): Received[] {
  const seen = new Set<number>();
  return received.filter((r) => !seen.has(r.generation) && seen.add(r.generation));
}
