/**
 * `GET /metrics`: the Prometheus text, on the A2A port or on a port of its own, open or behind
 * a bearer token of its own (never the A2A tokens: a scraper is not a user).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HarnessError } from '../errors.js';
import { describeError, type Logger } from '../log.js';
import { METRICS_PATH } from '../wire.js';
import { HarnessMetrics } from './metrics.js';
import { Scrapes } from './scrapes.js';

/** A node request handler: the HTTP app calls it as it is. */
export type MetricsHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** The harness's metrics, none when `metrics.enabled` is off, and the token a scrape must send, if any. */
export interface MetricsSetup {
  metrics?: HarnessMetrics;
  token?: string;
}

/** The metrics of a harness starting with this `metrics` config; throws `config_invalid` when its token is missing. */
export function setUpMetrics(
  config: { enabled: boolean; tokenEnv?: string },
  env: Readonly<Record<string, string | undefined>>,
): MetricsSetup {
  return config.enabled ? { metrics: new HarnessMetrics(), token: metricsToken(config.tokenEnv, env) } : {};
}

/** Where the metrics are served: by the A2A port's app (`onAppPort`), or by a server of their own (`apart`). */
export interface MetricsServing {
  onAppPort?: MetricsHandler;
  apart?: MetricsServer;
}

/** A node handler that answers some requests and hands the others to `next` (the health probes). */
export type PassingHandler = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

/**
 * Starts serving the metrics: on `config.port` when set (at `config.host`, default `host`), with
 * the `probes` beside them, else on the A2A port.
 */
export async function serveMetrics(
  { metrics, token }: MetricsSetup,
  config: { port?: number; host?: string },
  host: string,
  log: Logger,
  probes?: PassingHandler,
): Promise<MetricsServing> {
  if (!metrics) return {};
  const handler = metricsHandler(metrics, log, token);
  if (config.port === undefined) return { onAppPort: handler };
  return { apart: await startMetricsServer(handler, config.host ?? host, config.port, probes) };
}

/**
 * The scrape token `tokenEnv` names, read from `env`; none when no variable is named. A named
 * variable that is unset or empty stops the start: serving the metrics open instead would be
 * a silent downgrade.
 */
export function metricsToken(
  tokenEnv: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  if (tokenEnv === undefined) return undefined;
  const token = env[tokenEnv];
  if (!token)
    throw new HarnessError(
      'config_invalid',
      `metrics.tokenEnv names the environment variable ${tokenEnv}, which is not set: set it to the token scrapes must send, or remove metrics.tokenEnv.`,
    );
  return token;
}

/**
 * Answers a scrape: 401 without the token (when there is one), 405 for anything but GET or HEAD,
 * 503 with Retry-After past the scrapes in progress; else the text, rendered once for every
 * scrape of a moment (`scrapes.ts`).
 */
export function metricsHandler(
  metrics: HarnessMetrics,
  log: Logger,
  token?: string,
  scrapes = new Scrapes(() => metrics.scrape()),
): MetricsHandler {
  const expected = token === undefined ? undefined : digest(token);
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain' }).end('Use GET.\n');
      return;
    }
    if (expected && !matches(req.headers.authorization, expected)) {
      res
        .writeHead(401, { 'WWW-Authenticate': 'Bearer realm="metrics"', 'Content-Type': 'text/plain' })
        .end('This endpoint needs the metrics token: Authorization: Bearer <token>.\n');
      return;
    }
    const place = scrapes.take();
    if (!place) {
      res
        .writeHead(503, { 'Retry-After': '1', 'Content-Type': 'text/plain' })
        .end('Too many scrapes at once: scrape again in a moment.\n');
      return;
    }
    res.once('close', place.release);
    scrapes.text().then(
      ({ contentType, text }) => {
        res.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => {
        log.error('collecting the metrics failed', { error: describeError(error) });
        res
          .writeHead(500, { 'Content-Type': 'text/plain' })
          .end('Collecting the metrics failed; the server logged why.\n');
      },
    );
  };
}

/** Compared as digests, in constant time: the token's length leaks nothing either. */
function matches(authorization: string | undefined, expected: Buffer): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  return match !== null && timingSafeEqual(digest(match[1]!), expected);
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

export interface MetricsServer {
  /** e.g. http://127.0.0.1:9464/metrics */
  url: string;
  close(): Promise<void>;
}

/**
 * A server of its own for `/metrics` (`metrics.port`), and for the `probes` when given: nothing
 * else is served there. Its connections wait in an accept queue of their own, not behind a flood
 * of the A2A port's (Node takes one connection from a queue per event-loop iteration).
 */
export async function startMetricsServer(
  handler: MetricsHandler,
  host: string,
  port: number,
  probes?: PassingHandler,
): Promise<MetricsServer> {
  const metricsOrNotFound = (req: IncomingMessage, res: ServerResponse) => {
    if (new URL(req.url ?? '/', 'http://metrics').pathname === METRICS_PATH) handler(req, res);
    else res.writeHead(404, { 'Content-Type': 'text/plain' }).end(`Not found: the metrics are at ${METRICS_PATH}.\n`);
  };
  const server = createServer((req, res) =>
    probes ? probes(req, res, () => metricsOrNotFound(req, res)) : metricsOrNotFound(req, res),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new HarnessError(
          'config_invalid',
          `metrics.port ${port} on ${host} cannot be used (${error.code === 'EADDRINUSE' ? 'it is in use' : (error.code ?? 'unknown error')}).`,
        ),
      ),
    );
    server.listen({ host, port }, () => {
      server.removeAllListeners('error');
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}${METRICS_PATH}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
