import type { IncomingMessage, ServerResponse } from 'node:http';
import { describeError, type Logger } from '../log.js';

/** Liveness: the process answers. */
export const HEALTHZ_PATH = '/healthz';
/** Readiness: this instance takes new work. */
export const READYZ_PATH = '/readyz';

/** How long the store's answer is trusted: a flood of probes costs one query a second. */
const STORE_CHECK_CACHE_MS = 1000;
/** How long the store may take to answer `select 1` before the instance counts as not ready. */
const STORE_CHECK_TIMEOUT_MS = 1000;

export interface ReadinessOptions {
  /** A cheap query of the store (`select 1`); rejects, or never settles, when the store does not answer. */
  pingStore(): Promise<unknown>;
  /** Whether the instance drains (it is stopping): it starts no new turn. */
  draining(): boolean;
  /** Told when the store stops or starts answering (not at every probe). */
  log: Logger;
  cacheMs?: number;
  timeoutMs?: number;
}

export type ReadinessAnswer = { ready: true } | { ready: false; reason: 'draining' | 'store_unavailable' };

/**
 * Whether this instance should get new work: not while it drains, nor while its store does not
 * answer. The store is opened and migrated before the HTTP server listens, so an instance that
 * answers at all has its migrations done. The store's answer is kept for a second and one
 * query runs at a time, whoever asks; draining is read each time, so it fails the next probe.
 */
export class Readiness {
  private checked: { at: number; ok: boolean } | undefined;
  private checking: Promise<boolean> | undefined;
  /** The store's query under way: one that hangs past the timeout is waited on again, not repeated. */
  private pinging: Promise<unknown> | undefined;

  constructor(private readonly options: ReadinessOptions) {}

  async check(): Promise<ReadinessAnswer> {
    if (this.options.draining()) return { ready: false, reason: 'draining' };
    const cacheMs = this.options.cacheMs ?? STORE_CHECK_CACHE_MS;
    const checked = this.checked;
    const ok = checked && Date.now() - checked.at < cacheMs ? checked.ok : await (this.checking ??= this.checkStore());
    if (this.options.draining()) return { ready: false, reason: 'draining' };
    return ok ? { ready: true } : { ready: false, reason: 'store_unavailable' };
  }

  private async checkStore(): Promise<boolean> {
    const timeoutMs = this.options.timeoutMs ?? STORE_CHECK_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    let ok: boolean;
    try {
      this.pinging ??= this.options.pingStore().finally(() => (this.pinging = undefined));
      await Promise.race([
        this.pinging,
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`the store did not answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      ok = true;
    } catch (error) {
      ok = false;
      if (this.checked?.ok !== false)
        this.options.log.warn('the store does not answer: /readyz answers 503', { error: describeError(error) });
    } finally {
      clearTimeout(timer);
    }
    if (ok && this.checked?.ok === false) this.options.log.info('the store answers again: /readyz answers 200');
    this.checked = { at: Date.now(), ok };
    this.checking = undefined;
    return ok;
  }
}

/** A node request handler that answers the probes and hands anything else to `next`. */
export type ProbeHandler = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

/**
 * `GET /healthz` (200 while the process answers) and `GET /readyz` (200 when ready, else 503
 * with the reason), each a small JSON body that no cache keeps. Public, like the card: a load
 * balancer or an orchestrator probes them without a token. A plain node handler, so that it
 * runs first on the A2A port (before the request log, admission, auth and body parsing: probes
 * every few seconds neither fill the log nor wait for a place) and serves `metrics.port` too.
 */
export function healthChecks(readiness: Readiness): ProbeHandler {
  return (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path === HEALTHZ_PATH) return answer(res, 200, { status: 'ok' });
    if (path !== READYZ_PATH) return next();
    readiness.check().then(
      (ready) =>
        ready.ready
          ? answer(res, 200, { status: 'ready' })
          : answer(res, 503, { status: 'unavailable', reason: ready.reason }),
      // check() never rejects (a failing store is an answer); should it, the probe is not ready.
      () => answer(res, 503, { status: 'unavailable', reason: 'store_unavailable' }),
    );
  };
}

function answer(res: ServerResponse, status: number, body: object): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' });
  res.end(JSON.stringify(body));
}
