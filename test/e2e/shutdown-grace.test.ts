import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { StreamResponse } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { createLogger } from '../../src/log.js';
import { startModelServer, type RunningModelServer } from '../fixtures/model-server.js';
import { needs } from '../needs.js';
import { POSTGRES, tempSchema, type TempSchema } from '../support/postgres.js';
import { nextMatching, within } from '../support/wait.js';
import { startServerProcess, writeFixtureConfig } from './process.js';
import { createClient, startTestHarness, type TestHarness, sendStream } from './support.js';

/**
 * A stop is bounded (`shutdownGraceMs`): a turn whose end can never be stored (its task's row
 * held by another connection, its model holding its answer forever) does not hold the stop:
 * past the grace, it says what it left and returns, and the command line exits. Recovery ends
 * such a turn later.
 */
const GRACE_MS = 200;
/** The model answers one chunk, then holds the rest until its client leaves. */
const HELD_FOREVER = { reply: 'never finished', hold: { afterChunks: 1, until: new Promise(() => {}) } };

/** Starts a turn on a new task and holds every write of the task's row, once the model answers; returns the holding connection. */
async function turnThatCannotEnd(client: Client, url: string): Promise<pg.Client> {
  const stream = sendStream(client, 'hold on');
  let taskId = '';
  await nextMatching('the turn streaming', stream, (event: StreamResponse) => {
    if (event.payload?.$case === 'task') taskId = event.payload.value.id;
    return event.payload?.$case === 'artifactUpdate';
  });
  const locker = new pg.Client({ connectionString: url });
  await locker.connect();
  await locker.query('BEGIN');
  const { rowCount } = await locker.query('SELECT id FROM tasks WHERE id = $1 FOR UPDATE', [taskId]);
  assert.equal(rowCount, 1, "the task's row is held");
  return locker;
}

async function letGo(locker: pg.Client | undefined): Promise<void> {
  await locker?.query('ROLLBACK').catch(() => undefined);
  await locker?.end();
}

describe('a stop while a turn cannot store its end (shutdownGraceMs)', needs(POSTGRES), () => {
  describe('close()', () => {
    let schema: TempSchema;
    let h: TestHarness;
    let locker: pg.Client | undefined;
    const lines: string[] = [];

    before(async () => {
      schema = await tempSchema();
      h = await startTestHarness({
        config: { shutdownGraceMs: GRACE_MS },
        script: HELD_FOREVER,
        harness: { databaseUrl: schema.url, log: createLogger({ write: (line) => lines.push(line), pretty: false }) },
      });
    });

    after(async () => {
      await letGo(locker);
      await h?.model.close();
      await schema?.drop();
    });

    it('returns past the grace, logging the turns and writes it left', async () => {
      locker = await turnThatCannotEnd(await h.client('JSONRPC'), schema.url);

      await within('close() past the grace', h.harness.close());

      const left = lines.map((line) => JSON.parse(line)).find((entry) => /stopped before every turn/.test(entry.msg));
      assert.ok(left, `the stop says what it left:\n${lines.join('\n')}`);
      assert.equal(left.turns, 1, 'one turn left');
      assert.ok(left.writes >= 1, 'its stream, storing, left');
      assert.equal(left.graceMs, GRACE_MS);
    });
  });

  describe('the command line', () => {
    let schema: TempSchema;
    let model: RunningModelServer;
    let dir: string;
    let locker: pg.Client | undefined;

    before(async () => {
      schema = await tempSchema();
      model = await startModelServer(HELD_FOREVER);
      dir = mkdtempSync(join(tmpdir(), 'tiny-harness-grace-'));
    });

    after(async () => {
      await letGo(locker);
      await model?.close();
      await schema?.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('exits on SIGTERM past the grace, with code 0, saying what it left', async () => {
      const configFile = writeFixtureConfig(dir, model.baseURL);
      writeFileSync(
        configFile,
        JSON.stringify({
          ...JSON.parse(readFileSync(configFile, 'utf8')),
          shutdownGraceMs: GRACE_MS,
          drainTimeoutMs: 0,
        }),
      );
      const server = await startServerProcess(['--data-dir', join(dir, 'data'), '--config', configFile], {
        TINY_HARNESS_DATABASE_URL: schema.url,
      });
      try {
        locker = await turnThatCannotEnd(await createClient(server.url, 'JSONRPC'), schema.url);
        const code = await within('the process exiting past the grace', server.stop('SIGTERM'));
        assert.equal(code, 0, server.stderr());
        assert.match(server.stderr(), /stopped before every turn stored its end/);
        assert.match(server.stderr(), /"turns":1/);
      } finally {
        await server.stop('SIGKILL');
      }
    });
  });
});
