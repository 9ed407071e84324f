/**
 * The clients of bench/overload.ts: a streamed turn sent on a connection of its own (as many
 * separate clients would), timed to its first answer, a refusal or a first event, and to its
 * end; and a liveness probe of `/healthz` on a fresh connection each time, as an orchestrator
 * probes. Every request is bounded in time; all reach only 127.0.0.1.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { A2A_HEADERS, streamingRequest } from './clients.js';

/** How one request ended: accepted (its stream began), refused retryably, or failed (reset, timed out, other errors). */
export type Outcome = 'accepted' | 'refused' | 'failed';

export interface Answer {
  outcome: Outcome;
  /** ms from the request's start to its first answer: the first event of an accepted stream, or the refusal. */
  first: number;
  /** ms from the start to the end of the response (an accepted turn's whole stream). */
  total: number;
  /** What failed, for a failed request. */
  why?: string;
}

/**
 * `SendStreamingMessage` over JSON-RPC on a new connection. Accepted when the answer is an event
 * stream; refused when it is an error whose reason is UNAVAILABLE (in a 200, or a 503), whatever
 * the HTTP status.
 */
export function floodTurn(url: string, text: string, timeoutMs: number): Promise<Answer> {
  const payload = JSON.stringify(streamingRequest(text));
  const target = new URL(`${url}/a2a/jsonrpc`);
  return new Promise((resolve) => {
    const start = performance.now();
    let first: number | undefined;
    let settled = false;
    const done = (outcome: Outcome, why?: string) => {
      if (settled) return;
      settled = true;
      const now = performance.now() - start;
      resolve({ outcome, first: first ?? now, total: now, why });
    };
    const request = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        agent: false,
        headers: {
          'content-type': 'application/json',
          accept: 'text/event-stream',
          'content-length': Buffer.byteLength(payload),
          ...A2A_HEADERS,
        },
      },
      (response) => {
        const streaming = (response.headers['content-type'] ?? '').startsWith('text/event-stream');
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          first ??= performance.now() - start;
          if (!streaming) body += chunk;
        });
        response.on('end', () => {
          if (streaming)
            return done(first === undefined ? 'failed' : 'accepted', first === undefined ? 'empty stream' : undefined);
          done(/"UNAVAILABLE"/.test(body) ? 'refused' : 'failed', `HTTP ${response.statusCode}: ${body.slice(0, 120)}`);
        });
        response.on('error', (error) => done('failed', error.message));
      },
    );
    request.setTimeout(timeoutMs, () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    request.on('error', (error) => done('failed', (error as NodeJS.ErrnoException).code ?? error.message));
    request.end(payload);
  });
}

/** One `GET /healthz` on a new connection to `base`: its latency in ms, or `undefined` when it failed or passed `timeoutMs`. */
export function probe(base: string, timeoutMs: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const start = performance.now();
    const request = http.get(`${base}/healthz`, { agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode === 200 ? performance.now() - start : undefined));
    });
    request.setTimeout(timeoutMs, () => request.destroy());
    request.on('error', () => resolve(undefined));
  });
}

/** Probes `/healthz` every `everyMs` until stopped; the latencies, and how many probes failed or timed out. */
export function probeEvery(base: string, everyMs: number, timeoutMs: number) {
  const latencies: number[] = [];
  let failed = 0;
  const pending = new Set<Promise<void>>();
  const timer = setInterval(() => {
    const one = probe(base, timeoutMs).then((ms) => {
      if (ms === undefined) failed++;
      else latencies.push(ms);
      pending.delete(one);
    });
    pending.add(one);
  }, everyMs);
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all(pending);
      return { latencies, failed };
    },
  };
}
