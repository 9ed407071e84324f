import type { AgentExecutionEvent } from '@a2a-js/sdk/server';
import type { TurnPublisher } from './turn-opening.js';

/**
 * Appends a turn's events to its task's log, in the order published, as fast as the store takes
 * them: each write takes every event published while the one before it was under way, so a
 * model that streams faster than the store commits costs fewer transactions, not a longer queue.
 * The first write that fails stops the writer: later events are dropped (the turn is aborted,
 * and its end says why).
 */
export class TurnWriter implements TurnPublisher {
  private queued: AgentExecutionEvent[] = [];
  private writing: Promise<void> | undefined;
  private failure: { error: unknown } | undefined;
  /** The turn's task event, the first it publishes: its stream starts there. */
  private opening: AgentExecutionEvent | undefined;
  private openingWritten = false;

  constructor(
    private readonly append: (events: readonly AgentExecutionEvent[]) => Promise<unknown>,
    /** Told once, of the first failed write. */
    private readonly onFailure: (error: unknown) => void,
  ) {}

  publish(event: AgentExecutionEvent): void {
    if (event.kind === 'task') this.opening ??= event;
    if (this.failure) return;
    this.queued.push(event);
    this.writing ??= this.write();
  }

  /** Resolves once every event published so far is written, or the writer has failed. */
  async flushed(): Promise<void> {
    while (this.writing) await this.writing;
  }

  /**
   * The turn's task event when no write stored it (the write failed): the turn's end must be
   * stored after it, for the turn's stream starts at it.
   */
  get openingUnwritten(): AgentExecutionEvent | undefined {
    return this.openingWritten ? undefined : this.opening;
  }

  /** The first write's error, if one failed. */
  get failed(): { error: unknown } | undefined {
    return this.failure;
  }

  private async write(): Promise<void> {
    try {
      // Events published together (a turn's task and WORKING) go in one write.
      await Promise.resolve();
      while (this.queued.length > 0 && !this.failure) {
        const batch = this.queued;
        this.queued = [];
        try {
          await this.append(batch);
          if (this.opening && batch.includes(this.opening)) this.openingWritten = true;
        } catch (error) {
          this.failure = { error };
          this.queued = [];
          this.onFailure(error);
        }
      }
    } finally {
      this.writing = undefined;
    }
  }
}
