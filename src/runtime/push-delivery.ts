import { COMMAND_KEY, GENERATION_KEY } from '../wire.js';
import { describeError, type Logger } from '../log.js';
import type { Coordination, DueHead, PendingDelivery } from '../ports.js';

/**
 * The deliverer of push notifications on this instance (docs/push.md). It is woken when this
 * instance logs events (`Store.loggedHere`), by one timer set to the next retry's time, and,
 * when instances share the outbox, by a poll for what another instance left (`pollMs`). Each (task, config) pair is delivered in order: its lowest pending generation
 * first, the next only once that one is delivered or kept as failed. One instance delivers a
 * pair at a time, under the pair's push lease (`Coordination.acquirePush`, not a turn's): a dead
 * instance's leases go with its row when a survivor takes its place, and another instance takes
 * the pair over. Pairs are delivered beside turns and beside each other,
 * at most `maxConcurrent` POSTs at once: a slow receiver holds up only its own pair.
 */

/** What the deliverer reads and writes (`SqlPushStore`). */
export interface PushOutbox {
  heads(nowMs: number, limit: number): Promise<DueHead[]>;
  nextDueAfter(nowMs: number): Promise<number | undefined>;
  due(taskId: string, configId: string, nowMs: number, limit: number): Promise<PendingDelivery[]>;
  delivered(taskId: string, configId: string, generations: readonly number[]): Promise<void>;
  attemptFailed(
    taskId: string,
    configId: string,
    generation: number,
    attempt: { atMs: number; attempts: number; firstAttemptMs: number; nextAttemptMs?: number; error: string },
  ): Promise<void>;
}

export interface PushRetry {
  /** How long after its first attempt a delivery is tried again; then it is kept as failed. */
  retryForMs: number;
  /** The first retry's greatest wait; each next one's doubles, up to `maxRetryMs`. */
  firstRetryMs: number;
  maxRetryMs: number;
}

/** How often an instance sharing PostgreSQL looks for deliveries another instance left (`pollMs`). */
export const SHARED_PUSH_POLL_MS = 1000;

export interface PushDeliveryOptions {
  outbox: PushOutbox;
  leases: Pick<Coordination, 'acquirePush' | 'releasePush'>;
  /** POSTs the delivery; rejects when it failed (an error, a timeout, an answer other than 2xx). */
  send: (delivery: PendingDelivery, signal: AbortSignal) => Promise<void>;
  retry: PushRetry;
  log: Logger;
  /** The most POSTs under way at once here; default 32. */
  maxConcurrent?: number;
  /**
   * How often the outbox is looked at without a wake-up, for what other instances leave (a dead
   * one's deliveries); none by default: alone, every event is logged here and every retry's time
   * is known, so the timer is set to the next retry and nothing polls.
   */
  pollMs?: number;
  now?: () => number;
  random?: () => number;
  /** Told how each attempt ended: failed means it is tried again later, gave up that it ran out of retries. */
  onAttempt?: (outcome: 'delivered' | 'failed' | 'gave_up' | 'interrupted') => void;
}

/**
 * Retries are looked at on a grid of this many ms: those of many dead receivers, drawn at
 * random, then share a pass instead of one each. A retry waits at most this much longer.
 */
const RETRY_GRID_MS = 250;

function coalesced(atMs: number): number {
  return Number.isFinite(atMs) ? Math.ceil(atMs / RETRY_GRID_MS) * RETRY_GRID_MS : atMs;
}

/** How soon a pass that could not read the outbox is tried again. */
const RETRY_READ_MS = 1000;

/** Deliveries of a pair read at once, POSTed in order, then deleted together. */
const BATCH = 32;

/** How an attempt ended for its pair: go on, stop until a retry (or a restart), or go on past it, kept as failed. */
type AttemptEnd = 'delivered' | 'later' | 'gave_up';

/** A pair being delivered here. */
interface ActivePair {
  taskId: string;
  /** Events of its task were logged meanwhile: look again before letting go. */
  more: boolean;
  /** `more` was set at least once. */
  woken: boolean;
  run: Promise<void>;
}

export class PushDelivery {
  private readonly active = new Map<string, ActivePair>();
  private readonly stopping = new AbortController();
  private readonly maxConcurrent: number;
  private readonly pollMs: number | undefined;
  private readonly now: () => number;
  private readonly random: () => number;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private passing = false;
  private again = false;
  /** A pass found a due pair already under way here: look again when one ends. */
  private recheck = false;
  /**
   * Whether the outbox may hold retries that no timer here stands for (at the start, and once
   * the timer has fired): the next pass reads when the next one is due. A retry decided here
   * sets the timer itself, so a pass woken by an event reads nothing more than `heads`.
   */
  private retriesUnknown = true;

  constructor(private readonly options: PushDeliveryOptions) {
    this.maxConcurrent = options.maxConcurrent ?? 32;
    this.pollMs = options.pollMs;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
  }

  start(): void {
    this.wake();
  }

  /**
   * Events of the task were logged here, owing deliveries. Cheap (called under the task's lock):
   * a pair of the task being delivered here goes on to them; otherwise the outbox is looked at.
   */
  owed(taskId: string): void {
    let delivering = false;
    for (const pair of this.active.values())
      if (pair.taskId === taskId) {
        pair.more = pair.woken = true;
        delivering = true;
      }
    if (!delivering) this.wake();
  }

  /** Looks at the outbox soon: events were logged, or a pair ended. */
  wake(): void {
    if (this.stopping.signal.aborted) return;
    if (this.passing) this.again = true;
    else this.schedule(this.now());
  }

  /** Stops: no new POST; those under way are aborted (their deliveries stay pending) and waited for. */
  async stop(): Promise<void> {
    this.stopping.abort();
    clearTimeout(this.timer);
    await Promise.allSettled([...this.active.values()].map((pair) => pair.run));
  }

  private schedule(at: number): void {
    if (this.stopping.signal.aborted || at >= this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timerAt = Infinity;
        // The timer stood for the earliest retry only: the later ones are read again.
        this.retriesUnknown = true;
        void this.pass();
      },
      Math.max(0, at - this.now()),
    );
    this.timer.unref();
  }

  /**
   * Starts the pairs due now, and sets the timer to the next retry's time (or the poll). One or
   * two statements on the due index, whatever the outbox holds: a thousand deliveries waiting
   * on dead receivers cost nothing between their retries.
   */
  private async pass(): Promise<void> {
    this.passing = true;
    const now = this.now();
    let next = this.pollMs === undefined ? Infinity : now + this.pollMs;
    try {
      const { outbox } = this.options;
      for (const head of await outbox.heads(now, this.maxConcurrent * 4)) {
        const key = `${head.taskId}\u0000${head.configId}`;
        if (this.active.has(key)) this.recheck = true;
        else if (this.active.size < this.maxConcurrent) this.startPair(key, head.taskId, head.configId);
        else this.recheck = true;
      }
      if (this.retriesUnknown) {
        this.retriesUnknown = false;
        next = Math.min(next, (await outbox.nextDueAfter(now)) ?? Infinity);
      }
    } catch (error) {
      this.retriesUnknown = true;
      this.options.log.warn('reading the push-notification outbox failed', { error: describeError(error) });
      next = Math.min(next, now + RETRY_READ_MS);
    } finally {
      this.passing = false;
      next = coalesced(next);
      if (this.again) {
        this.again = false;
        next = this.now();
      }
      this.schedule(next);
    }
  }

  private startPair(key: string, taskId: string, configId: string): void {
    const pair: ActivePair = { taskId, more: false, woken: false, run: Promise.resolve() };
    this.active.set(key, pair);
    pair.run = this.deliverPair(pair, configId)
      .catch((error: unknown) =>
        this.options.log.warn('delivering push notifications failed', {
          task: taskId,
          config: configId,
          error: describeError(error),
        }),
      )
      .finally(() => {
        this.active.delete(key);
        // Another config of the task may owe deliveries too (`owed` woke only this pair).
        if (this.recheck || pair.woken) {
          this.recheck = false;
          this.wake();
        }
      });
  }

  /** Delivers the pair's due deliveries in order, under its lease; stops at a failure (retried later). */
  private async deliverPair(pair: ActivePair, configId: string): Promise<void> {
    const { taskId } = pair;
    if (!(await this.options.leases.acquirePush(taskId, configId))) return;
    try {
      while (!this.stopping.signal.aborted) {
        pair.more = false;
        const batch = await this.options.outbox.due(taskId, configId, this.now(), BATCH);
        if (batch.length === 0) {
          if (pair.more) continue;
          break;
        }
        // A batch that was not full held all there was: read again only when more was logged since.
        const whole = batch.length < BATCH;
        // Deleted together once POSTed: a crash in between sends them again (at least once).
        const done: number[] = [];
        let outcome: AttemptEnd = 'delivered';
        for (const delivery of batch) {
          outcome = this.stopping.signal.aborted ? 'later' : await this.attempt(taskId, configId, delivery);
          if (outcome !== 'delivered') break;
          done.push(delivery.generation);
        }
        await this.options.outbox.delivered(taskId, configId, done);
        // Given up, the delivery is kept as failed and the pair's next ones are due now: go on.
        if (outcome === 'later') break;
        if (outcome === 'delivered' && whole && !pair.more) break;
      }
    } finally {
      await this.options.leases.releasePush(taskId, configId);
    }
  }

  /** One attempt, and how it ended for the pair. */
  private async attempt(taskId: string, configId: string, delivery: PendingDelivery): Promise<AttemptEnd> {
    const { outbox, retry, log } = this.options;
    const startedMs = this.now();
    try {
      await this.options.send(delivery, this.stopping.signal);
    } catch (error) {
      // Cut short by a stop: still pending, delivered after the restart or by another instance.
      if (this.stopping.signal.aborted) {
        this.options.onAttempt?.('interrupted');
        return 'later';
      }
      const attempts = delivery.attempts + 1;
      const firstAttemptMs = delivery.firstAttemptMs ?? startedMs;
      const ceiling = Math.min(retry.maxRetryMs, retry.firstRetryMs * 2 ** Math.min(attempts - 1, 40));
      const nextAttemptMs = this.now() + Math.ceil(this.random() * ceiling);
      const reason = describeError(error);
      const outOfRetries = nextAttemptMs - firstAttemptMs > retry.retryForMs;
      await outbox.attemptFailed(taskId, configId, delivery.generation, {
        atMs: startedMs,
        attempts,
        firstAttemptMs,
        nextAttemptMs: outOfRetries ? undefined : nextAttemptMs,
        error: reason,
      });
      // The config's URL, token and credentials are never logged.
      if (outOfRetries)
        log.warn('a push notification ran out of retries; it is kept as failed', {
          task: taskId,
          config: configId,
          generation: delivery.generation,
          attempts,
          error: reason,
        });
      else this.schedule(coalesced(nextAttemptMs));
      this.options.onAttempt?.(outOfRetries ? 'gave_up' : 'failed');
      return outOfRetries ? 'gave_up' : 'later';
    }
    this.options.onAttempt?.('delivered');
    return 'delivered';
  }
}

/** The header every delivery carries its event's generation in (a command reply's metadata takes none, CMD-4). */
export const GENERATION_HEADER = 'X-Tiny-Harness-Generation';

/**
 * The body and headers of a delivery: the event's `StreamResponse` JSON with its generation in
 * its metadata, as streams send it (a command reply's metadata stays exactly the extension's,
 * CMD-4), and in `GENERATION_HEADER`, so that a receiver can drop a duplicate.
 */
export function deliveryRequest(delivery: PendingDelivery): { body: string; headers: Record<string, string> } {
  const response = JSON.parse(delivery.eventJson) as Record<string, { metadata?: Record<string, unknown> }>;
  for (const payload of Object.values(response))
    if (payload && typeof payload === 'object' && payload.metadata?.[COMMAND_KEY] === undefined)
      payload.metadata = { ...payload.metadata, [GENERATION_KEY]: delivery.generation };
  const { token, authentication } = delivery.config;
  const headers: Record<string, string> = {
    // A2A 1.0 §4.3.3 names application/json for the webhook's POST.
    'Content-Type': 'application/json',
    [GENERATION_HEADER]: String(delivery.generation),
  };
  if (token) headers['X-A2A-Notification-Token'] = token;
  if (authentication?.scheme) headers.Authorization = `${authentication.scheme} ${authentication.credentials}`;
  return { body: JSON.stringify(response), headers };
}
