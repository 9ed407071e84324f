import type { Socket } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HarnessError } from '../errors.js';
import { answerJsonRpcError, answerRestError } from './edge-http.js';

/** Why a request was refused before it was read: the error code it is refused with. */
export type AdmissionRefusal = 'requests_at_limit' | 'event_loop_lagging';

export interface AdmissionOptions {
  /** The most requests in progress at once (`admission.maxRequestsInProgress`). */
  maxRequestsInProgress: number;
  /** Refuse while the event loop's delay is past this many ms; 0 never refuses for it (`admission.maxEventLoopDelayMs`). */
  maxEventLoopDelayMs: number;
  /** The delay is looked at only while at least this many requests are in progress (`admission.eventLoopCheckFrom`). */
  eventLoopCheckFrom: number;
  /** The event loop's recent delay in ms (`EventLoopDelay.ms`); a test hands in its own. */
  eventLoopDelayMs(): number;
  /** Told of each refusal (counted and logged by the harness). */
  onRefused?(reason: AdmissionRefusal): void;
}

/** A request's place among those in progress: given back once, when its answer has ended or its client left. */
export type Release = () => void;

/**
 * Admission before any work: a request is taken only while fewer than `maxRequestsInProgress`
 * are in progress and, when it is new load, while the event loop keeps up; otherwise it is
 * refused at once, retryably, before its body is read.
 *
 * Without it, a flood waited where no bound could see it (2,000 ten-second turns in 60 s: first
 * bytes at a median of 86 s, `/healthz` up to 10.9 s, none refused): Node takes one connection
 * from the accept queue per event-loop iteration, so when iterations grow long (the loop
 * saturated by the turns it took) new connections wait in the kernel, probes' included. A
 * refusal costs microseconds; refusing new load while the loop lags keeps its iterations short,
 * and so the accept queue moving.
 *
 * New load is a request on an HTTP connection that has carried none yet (an HTTP/1.1
 * connection carries one request at a time, so only new connections raise how many run at
 * once), and every gRPC call (HTTP/2 carries any number on one connection). A client already
 * served on its connection goes on being served while the loop lags, within
 * `maxRequestsInProgress`; and the loop is looked at only while `eventLoopCheckFrom` requests
 * are in progress: a few clients on a busy or shared machine, or one large request, are
 * answered late, not refused. The turn bound (`TurnLimit`) still acts behind it all.
 */
export class Admission {
  private taken = 0;

  constructor(private readonly options: AdmissionOptions) {}

  /** Requests in progress now. */
  get inProgress(): number {
    return this.taken;
  }

  /** A place for one request, or the refusal to answer it with; `newLoad` is refused while the loop lags. */
  admit(newLoad: boolean): { release: Release } | { refused: HarnessError } {
    const { maxRequestsInProgress, maxEventLoopDelayMs, eventLoopCheckFrom } = this.options;
    let reason: AdmissionRefusal | undefined;
    if (this.taken >= maxRequestsInProgress) reason = 'requests_at_limit';
    else if (
      newLoad &&
      maxEventLoopDelayMs > 0 &&
      this.taken >= eventLoopCheckFrom &&
      this.options.eventLoopDelayMs() > maxEventLoopDelayMs
    )
      reason = 'event_loop_lagging';
    if (reason) {
      this.options.onRefused?.(reason);
      return { refused: refusal(reason, maxRequestsInProgress) };
    }
    this.taken++;
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        this.taken--;
      },
    };
  }
}

function refusal(reason: AdmissionRefusal, max: number): HarnessError {
  return reason === 'requests_at_limit'
    ? new HarnessError(
        'requests_at_limit',
        `This server is handling as many requests as it may (${max}). Send the request again in a few seconds.`,
      )
    : new HarnessError(
        'event_loop_lagging',
        'This server is too busy to answer in time. Send the request again in a few seconds.',
      );
}

/**
 * Admission on the A2A routes (JSON-RPC and HTTP+JSON): a request is admitted and holds its
 * place until its response closes (ended, or its client gone), or it is answered 503 with
 * Retry-After at once, in its binding's form (JSON-RPC with id null: its body was not read).
 * The first request admitted on a connection marks it served. Answers whether it was admitted.
 */
export function admitRequests(
  admission: Admission,
): (req: IncomingMessage, res: ServerResponse, binding: 'jsonrpc' | 'rest') => boolean {
  const served = new WeakSet<Socket>();
  return (req, res, binding) => {
    const admitted = admission.admit(!served.has(req.socket));
    if ('refused' in admitted) {
      if (binding === 'jsonrpc') answerJsonRpcError(res, null, admitted.refused);
      else answerRestError(res, admitted.refused);
      return false;
    }
    served.add(req.socket);
    res.once('close', admitted.release);
    return true;
  };
}
