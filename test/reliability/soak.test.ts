/**
 * A short run of the soak (scripts/soak.ts): 10 seconds of mixed traffic from 8 workers over
 * JSON-RPC, HTTP+JSON and gRPC against an in-process harness, then every task checked against
 * the store. `node --import tsx scripts/soak.ts --minutes 2` runs the long one by hand.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { formatReport, KINDS, runSoak } from '../../scripts/soak.js';

it(
  'a 10-second soak with 8 workers: no unexpected error, nothing lost, duplicated or left in flight',
  { timeout: 50_000 },
  async (t) => {
    const report = await runSoak({ durationMs: 10_000, workers: 8 });
    t.diagnostic(formatReport(report));
    assert.deepEqual(report.errors, [], 'errors');
    assert.deepEqual(report.inconsistencies, [], 'inconsistencies');
    assert.ok(report.turns >= 20, `only ${report.turns} turns`);
    assert.ok(report.replies >= 20, `only ${report.replies} command replies`);
    for (const kind of KINDS) assert.ok(report.requests[kind] > 0, `no ${kind} request was made`);
  },
);
