/**
 * The agent card, read from beside the page and read again as command files come and go:
 * cheaply, with `If-None-Match` once the harness has sent an ETag (a 304 means unchanged), and
 * in full from a harness that sends none.
 */
import type { AgentCard } from '@a2a-js/sdk';
import { AgentCardResolver } from '@a2a-js/sdk/client';
import { harnessRoot } from './chat.js';
import { harnessFetch } from './reachability.js';

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
