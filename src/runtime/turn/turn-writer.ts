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
  /** The turn's final status, once published (`end`): written with `replyAfter`. */
  private ending: AgentExecutionEvent | undefined;
  private lastMessage: string | undefined;

  constructor(
    /** Writes events; `replyAfter` with the turn's final status (`TurnWrite.replyAfter`). */
    private readonly append: (events: readonly AgentExecutionEvent[], replyAfter?: string) => Promise<unknown>,
    /** Told once, of the first failed write. */
    private readonly onFailure: (error: unknown) => void,
  ) {}

  publish(event: AgentExecutionEvent): void {
    if (event.kind === 'task') this.opening ??= event;
    const message =
      event.kind === 'task'
        ? event.data.history?.at(-1)
        : event.kind === 'statusUpdate'
          ? event.data.status?.message
          : undefined;
    if (message && event !== this.ending) this.lastMessage = message.messageId;
    if (this.failure) return;
    this.queued.push(event);
    this.writing ??= this.write();
  }

  /**
   * Publishes the turn's final status, in a write of its own (every event before it written
   * first), its message placed right after the turn's own last one (`replyAfter`).
   */
  async end(event: AgentExecutionEvent): Promise<void> {
    await this.flushed();
    this.ending = event;
    this.publish(event);
    await this.flushed();
  }

  /**
   * The last message the turn's own events put in the history (the message it answers, or its
   * newest tool call): its final status's message goes right after it.
   */
  get replyAfter(): string | undefined {
    return this.lastMessage;
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
          await this.append(batch, this.ending && batch.includes(this.ending) ? this.lastMessage : undefined);
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
