import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentCard } from '@a2a-js/sdk';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { TransportCardCache } from '../../src/server/transport-card.js';

/** The card the SDK's transports check each call's protocol version against (`transport-card.ts`). */

function counting(cards: Array<AgentCard | Error>): { handler: A2ARequestHandler; built: () => number } {
  let built = 0;
  const handler = {
    getAgentCard: async () => {
      const next = cards[Math.min(built++, cards.length - 1)]!;
      if (next instanceof Error) throw next;
      return next;
    },
  } as unknown as A2ARequestHandler;
  return { handler, built: () => built };
}

describe('TransportCardCache', () => {
  it('builds the card once for every call after, concurrent ones included', async () => {
    const card = { name: 'one' } as AgentCard;
    const { handler, built } = counting([card, { name: 'two' } as AgentCard]);
    const cache = new TransportCardCache(handler);
    const cards = await Promise.all([cache.getAgentCard(), cache.getAgentCard()]);
    assert.deepEqual(cards, [card, card]);
    assert.equal(await cache.getAgentCard(), card);
    assert.equal(built(), 1);
  });

  it('keeps no failure: the call after one builds the card again', async () => {
    const card = { name: 'after' } as AgentCard;
    const { handler, built } = counting([new Error('not yet'), card]);
    const cache = new TransportCardCache(handler);
    await assert.rejects(cache.getAgentCard(), /not yet/);
    assert.equal(await cache.getAgentCard(), card);
    assert.equal(built(), 2);
  });
});
