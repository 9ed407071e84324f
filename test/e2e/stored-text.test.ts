/**
 * Issue 33: a string the store keeps as text of its own (a push config's token, URL and id) is
 * refused at the edge when it holds a NUL, which PostgreSQL cannot store ("invalid byte
 * sequence", once an internal error) and SQLite took: the same clear invalid-params refusal,
 * naming the field, on both stores and over the three transports; the same config without it is
 * stored. Message text may hold one: the store keeps it as JSON, which escapes it, on both.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TaskPushNotificationConfig } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { needs } from '../needs.js';
import { POSTGRES, tempSchema, type TempSchema } from '../support/postgres.js';
import { send, startTestHarness, textOf, TRANSPORTS, type TestHarness } from './support.js';

const STORES = [
  { name: 'SQLite', requires: {} },
  { name: 'PostgreSQL', requires: needs(POSTGRES) },
] as const;

for (const store of STORES) {
  describe(`strings the store keeps as text, on ${store.name} (issue 33)`, store.requires, () => {
    let h: TestHarness;
    let schema: TempSchema | undefined;

    before(async () => {
      schema = store.name === 'PostgreSQL' ? await tempSchema() : undefined;
      // A webhook on the loopback, never called: no event of its task follows the config.
      h = await startTestHarness({
        harness: schema ? { databaseUrl: schema.url } : {},
        config: { push: { allowPrivateNetworks: true } },
      });
    });

    after(async () => {
      await h?.close();
      await schema?.drop();
    });

    for (const transport of TRANSPORTS) {
      it(`a NUL in a push token is invalid params naming the field, over ${transport}; without it the config is stored`, async () => {
        const client = await h.client(transport);
        const task = await send(client, '/help');
        const config = (token: string): TaskPushNotificationConfig => ({
          tenant: '',
          id: '',
          taskId: task.id,
          url: 'http://127.0.0.1:9/hook',
          token,
          authentication: undefined,
        });
        await assert.rejects(client.createTaskPushNotificationConfig(config('a\u0000b')), (error: unknown) => {
          assert.ok(error instanceof RequestMalformedError, `not invalid params: ${String(error).slice(0, 300)}`);
          assert.match(error.message, /^token must hold no control characters \(NUL included\) and be valid Unicode/);
          return true;
        });
        const stored = await client.createTaskPushNotificationConfig(config('a-b'));
        assert.equal(stored.token, 'a-b');
      });
    }

    it('a NUL in message text is kept, as JSON keeps it', async () => {
      const client = await h.client('JSONRPC');
      const sent = await send(client, 'nul \u0000 inside');
      const read = await client.getTask({ tenant: '', id: sent.id });
      assert.ok(read.history.some((message) => textOf(message) === 'nul \u0000 inside'));
    });
  });
}
