/**
 * Keeping the chat's copy of the agent's card fresh, so that a command added to the agent while
 * the chat is open (a command file) is offered: the card is read again every 30 s while the chat
 * is idle, when a `/` is typed and the copy is older than a few seconds, and before a `/name` is
 * called unknown. The harness answers an unchanged card with a 304 and no body, so each read
 * costs one small request.
 */
import { refreshCard, type Connection } from './connect.js';

/** How often an idle chat reads the card again. */
const CARD_REFRESH_MS = 30_000;

/** A card read longer ago than this is read again when a `/` is typed. */
const CARD_FRESH_MS = 5000;

export class CardRefresh {
  private readAt: number;
  private reading: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  /**
   * `now` is the chat's clock; `changed` is called when a read brought a different card (the
   * menu should be drawn again).
   */
  constructor(
    private readonly connection: Connection,
    private readonly now: () => number,
    private readonly changed: () => void,
  ) {
    this.readAt = now();
  }

  /** Reads the card every 30 s while `idle()`, until {@link stop}. */
  start(idle: () => boolean): void {
    this.timer = setInterval(() => {
      if (idle()) void this.read();
    }, CARD_REFRESH_MS).unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** What is typed changed: a command being typed reads a card that is not fresh again. */
  typed(text: string): void {
    if (text.startsWith('/') && this.now() - this.readAt > CARD_FRESH_MS) void this.read();
  }

  /** Reads the card again, one read at a time; resolves once the read is over. */
  read(): Promise<void> {
    this.reading ??= refreshCard(this.connection)
      .then((changed) => {
        this.readAt = this.now();
        if (changed) this.changed();
      })
      .finally(() => (this.reading = undefined));
    return this.reading;
  }
}
