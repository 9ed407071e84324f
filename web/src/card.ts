/**
 * The agent card, read from beside the page and read again as command files come and go:
 * cheaply, with `If-None-Match` once the harness has sent an ETag (a 304 means unchanged), and
 * in full from a harness that sends none.
 */
import type { AgentCard } from '@a2a-js/sdk';
import { AgentCardResolver } from '@a2a-js/sdk/client';
import { harnessRoot } from './chat.js';
import { harnessFetch, isUnreachable } from './reachability.js';

/** Where the card is, under the harness's root (A2A 1.0's well-known path). */
const CARD_PATH = '.well-known/agent-card.json';

export class CardReader {
  private etag: string | undefined;

  constructor(private readonly pageUrl: string) {}

  /** The card, or undefined when it has not changed since the last read. */
  async read(): Promise<AgentCard | undefined> {
    const headers: Record<string, string> = this.etag ? { 'If-None-Match': this.etag } : {};
    // The page validates the card itself: the browser's cache would answer 200 for a 304.
    const response = await harnessFetch(new URL(CARD_PATH, harnessRoot(this.pageUrl)), { headers, cache: 'no-store' });
    if (response.status === 304) return undefined;
    if (!response.ok) throw new Error(`The agent card could not be read: the harness answered ${response.status}.`);
    const card = AgentCardResolver.default.normalizeAgentCard(await response.json());
    this.etag = response.headers.get('etag') ?? undefined;
    return card;
  }
}

/** How the page hears of a card read again. */
export interface CardUpdates {
  /** A card that changed since the last read. */
  changed(card: AgentCard): void;
  /** The harness answered (after it could not be reached, this clears the notice). */
  answered(): void;
  /** The harness could not be reached; the next read is in `delayMs`. */
  unreachable(error: unknown, delayMs: number): void;
}

/**
 * Reads the card again when it may have changed: when a command name no command of the card
 * starts is typed (once per name), when asked (before a command is called unknown), and every
 * `everyMs` while `idle()`. A failure keeps the commands the page has.
 */
export class CardRefresh {
  private askedFor: string | undefined;

  constructor(
    private readonly reader: CardReader,
    private readonly updates: CardUpdates,
    private readonly everyMs: number,
    idle: () => boolean,
  ) {
    setInterval(() => {
      if (!document.hidden && idle()) void this.now();
    }, everyMs);
  }

  /** `text` was typed: an unknown `/name` may be a command file added since the card was read. */
  typed(text: string, names: readonly string[]): void {
    const name = /^\/([a-z][a-z0-9-]*)$/.exec(text)?.[1];
    if (!name || name === this.askedFor || names.some((known) => known.startsWith(name))) return;
    this.askedFor = name;
    void this.now();
  }

  /** Reads the card now (a 304 when unchanged). */
  async now(): Promise<void> {
    try {
      const fresh = await this.reader.read();
      this.updates.answered();
      if (fresh) this.updates.changed(fresh);
    } catch (error) {
      if (isUnreachable(error)) this.updates.unreachable(error, this.everyMs);
    }
  }
}
