import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import type { StreamResponse } from '@a2a-js/sdk';
import { createLogger } from '../../src/log.js';
import { needs } from '../needs.js';
import { POSTGRES, tempSchema, type TempSchema } from '../support/postgres.js';
import { nextMatching, within } from '../support/wait.js';
import { startTestHarness, userMessage, type TestHarness } from './support.js';

/**
 * A stop is bounded (`shutdownGraceMs`): a turn whose end can never be stored (its task's row
 * held by another connection, its model holding its answer forever) does not hold `close()`:
 * past the grace, close logs what it left and returns. Recovery ends such a turn later.
 */
describe('a stop while a turn cannot store its end (shutdownGraceMs)', needs(POSTGRES), () => {
  let schema: TempSchema;
  let h: TestHarness;
  let locker: pg.Client | undefined;
  const lines: string[] = [];

  before(async () => {
    schema = await tempSchema();
    h = await startTestHarness({
      config: { shutdownGraceMs: 200 },
      // The model answers one chunk, then holds the rest until the client leaves.
      script: { reply: 'never finished', hold: { afterChunks: 1, until: new Promise(() => {}) } },
      harness: { databaseUrl: schema.url, log: createLogger({ write: (line) => lines.push(line), pretty: false }) },
    });
  });

  after(async () => {
    await locker?.query('ROLLBACK').catch(() => undefined);
    await locker?.end();
    await h?.model.close();
    await schema?.drop();
  });

  it('close() returns past the grace, logging the turns and writes it left', async () => {
    const client = await h.client('JSONRPC');
    const stream = client.sendMessageStream({
      tenant: '',
      message: userMessage('hold on'),
      configuration: undefined,
      metadata: {},
    });
    let taskId = '';
    await nextMatching('the turn streaming', stream, (event: StreamResponse) => {
      if (event.payload?.$case === 'task') taskId = event.payload.value.id;
      return event.payload?.$case === 'artifactUpdate';
    });
    // Every write of the task's row now waits for this transaction, which never ends before close() returns.
    locker = new pg.Client({ connectionString: schema.url });
    await locker.connect();
    await locker.query('BEGIN');
    const { rowCount } = await locker.query('SELECT id FROM tasks WHERE id = $1 FOR UPDATE', [taskId]);
    assert.equal(rowCount, 1, "the task's row is held");

    await within('close() past the grace', h.harness.close());

    const left = lines.map((line) => JSON.parse(line)).find((entry) => /stopped before every turn/.test(entry.msg));
    assert.ok(left, `the stop says what it left:\n${lines.join('\n')}`);
    assert.equal(left.turns, 1, 'one turn left');
    assert.ok(left.writes >= 1, 'its stream, storing, left');
    assert.equal(left.graceMs, 200);
  });
});
