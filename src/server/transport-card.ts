import type { AgentCard } from '@a2a-js/sdk';
import { DelegatingRequestHandler } from '../a2a/index.js';

/**
 * The step of the request path that the SDK's transports' card checks stop at. They ask for the agent card on
 * every call, only to check the protocol version a client asks for against the card's
 * interfaces (and, over HTTP+JSON, whether a capability is on): both fixed while serving. The
 * card's own route still builds the card per request, so a changed command list shows at once
 * (CMD-16); for the transports' checks the first card built is kept. Building it on every call
 * was about 2% of a command's CPU (bench/RESULTS.md).
 */
export class TransportCardCache extends DelegatingRequestHandler {
  private card: Promise<AgentCard> | undefined;

  override getAgentCard(): Promise<AgentCard> {
    if (!this.card) {
      const building = this.inner.getAgentCard();
      this.card = building;
      building.catch(() => {
        if (this.card === building) this.card = undefined; // a failure is not kept: the next call builds again
      });
    }
    return this.card;
  }
}
