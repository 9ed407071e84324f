/**
 * Scrapes of `/metrics` kept cheap (src/telemetry/scrapes.ts, metrics-endpoint.ts): the text
 * rendered once for many scrapes, kept a moment, one rendering at a time; scrapes in progress
 * bounded, the rest refused 503 at once.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../src/log.js';
import type { HarnessMetrics } from '../../src/telemetry/metrics.js';
import { metricsHandler, startMetricsServer, type MetricsServer } from '../../src/telemetry/metrics-endpoint.js';
import { Scrapes, type Scrape } from '../../src/telemetry/scrapes.js';
import { poll } from '../support/wait.js';

const TEXT: Scrape = { contentType: 'text/plain; version=0.0.4; charset=utf-8', text: 'tiny_harness_up 1\n' };

/** A metrics registry whose renderings are counted, and held until `release()` once `hold()` was called. */
function countedMetrics() {
  let renders = 0;
  let hold: Promise<void> | undefined;
  let release = () => {};
  return {
    metrics: {
      async scrape() {
        renders++;
        await hold;
        return TEXT;
      },
    } as unknown as HarnessMetrics,
    renders: () => renders,
    hold() {
      hold = new Promise<void>((resolve) => (release = resolve));
    },
    release: () => release(),
  };
}

describe('scrapes of /metrics', () => {
  it('fifty scrapes at once cost one rendering; within the moment it is kept, none more', async () => {
    let renders = 0;
    const scrapes = new Scrapes(async () => (renders++, TEXT), Number.MAX_SAFE_INTEGER, 100);
    const texts = await Promise.all(Array.from({ length: 50 }, () => scrapes.text()));
    assert.ok(texts.every((scrape) => scrape === TEXT));
    assert.equal(renders, 1);
    await scrapes.text();
    assert.equal(renders, 1, 'kept');
  });

  it('once the moment has passed, the next scrape renders again; a failed rendering is not kept', async () => {
    let renders = 0;
    let failing = true;
    const scrapes = new Scrapes(async () => {
      renders++;
      if (failing) throw new Error('collect failed');
      return TEXT;
    }, 0);
    await assert.rejects(scrapes.text(), /collect failed/);
    failing = false;
    assert.equal(await scrapes.text(), TEXT, 'the failure was not kept');
    await scrapes.text();
    assert.equal(renders, 3, 'kept for no time: each scrape rendered');
  });

  describe('over HTTP', () => {
    const counted = countedMetrics();
    const scrapes = new Scrapes(() => counted.metrics.scrape());
    let server: MetricsServer;

    before(async () => {
      server = await startMetricsServer(
        metricsHandler(counted.metrics, silentLogger, undefined, scrapes),
        '127.0.0.1',
        0,
      );
    });

    after(() => server?.close());

    it('past the scrapes in progress, a scrape is refused 503 with Retry-After at once; the others are answered, from one rendering', async () => {
      counted.hold();
      const answers = Array.from({ length: 8 }, () => fetch(server.url));
      // The eight hold their places while the rendering is held: the ninth finds none.
      await poll('eight scrapes in progress', () => scrapes.inProgress === 8);
      const refused = await fetch(server.url);
      assert.equal(refused.status, 503);
      assert.equal(refused.headers.get('retry-after'), '1');
      assert.match(await refused.text(), /Too many scrapes at once/);
      counted.release();
      for (const response of await Promise.all(answers)) {
        assert.equal(response.status, 200);
        assert.equal(await response.text(), TEXT.text);
      }
      assert.equal(counted.renders(), 1, 'one rendering for the eight');
      assert.equal((await fetch(server.url)).status, 200, 'the places are given back');
    });
  });
});
