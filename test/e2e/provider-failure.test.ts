/**
 * A failing provider, as the user sees it (issue 33): a failure the AI SDK tries again is said
 * at once, in a `retrying` notice of the turn's stream, while the turn goes on to its reply; a
 * failure that ends the turn says what the provider itself said beside ours, with any key it
 * quoted redacted, in the turn's final message and in the log line alike. Both paths of a turn:
 * the plain reply, and the tool loop (an MCP server configured).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState, type Message, type StreamResponse } from '@a2a-js/sdk';
import { NOTICE_KEY, RETRYING_NOTICE } from '../../src/wire.js';
import { lastMessage, type ModelServerScript } from '../fixtures/model-server.js';
import { STDIO_FIXTURE } from '../fixtures/mcp-server.js';
import { collect, send, sendStream, startTestHarness, textOf, type TestHarness } from './support.js';

const FAKE_KEY = 'sk-fake-0123456789abcdefABCDEF';

/** A model that answers `rate limited once` with a 429 first (retry at once), then holds its reply until `released`. */
function script(released: Promise<unknown>): ModelServerScript {
  const seen = new Map<string, number>();
  const asked = (body: any, marker: string) => lastMessage(body).content.includes(marker);
  return {
    reply: 'Here you are.',
    fail: (body) => {
      if (asked(body, 'bad key'))
        return { kind: 'status', status: 401, message: `Incorrect API key provided: ${FAKE_KEY}. Check your key.` };
      if (!asked(body, 'rate limited once')) return undefined;
      const count = (seen.get(body.model) ?? 0) + 1;
      seen.set(body.model, count);
      return count === 1
        ? {
            kind: 'status',
            status: 429,
            message: 'Rate limit reached for requests',
            headers: { 'retry-after-ms': '0' },
          }
        : undefined;
    },
    // The retry's reply waits for the test: the notice must have reached the client before any of it.
    hold: (body) => (asked(body, 'rate limited once') ? { afterChunks: 0, until: released } : undefined),
  };
}

function noticeOf(event: StreamResponse): { kind: unknown; message: Message } | undefined {
  const payload = event.payload;
  if (payload?.$case !== 'statusUpdate' || !payload.value.status?.message) return undefined;
  const message = payload.value.status.message;
  return message.metadata?.[NOTICE_KEY] === undefined ? undefined : { kind: message.metadata[NOTICE_KEY], message };
}

const paths = [
  { name: 'a plain turn', config: {}, tools: false },
  { name: 'a turn with tools', config: { mcpServers: { fx: STDIO_FIXTURE } }, tools: true },
];

for (const path of paths) {
  describe(`a failing provider, ${path.name}`, () => {
    let h: TestHarness;
    let release!: () => void;
    const logged: string[] = [];
    const line = (message: string, fields?: unknown) => void logged.push(`${message} ${JSON.stringify(fields ?? {})}`);

    before(async () => {
      h = await startTestHarness({
        script: script(new Promise<void>((resolve) => (release = resolve))),
        config: path.config,
        harness: { log: { debug: line, info: line, warn: line, error: line } },
      });
    });

    after(async () => {
      release?.();
      await h?.close();
    });

    it('a rate limit (429) then a reply: the user sees the retrying notice, with the provider’s words, before the reply', async () => {
      const client = await h.client('JSONRPC');
      const stream = sendStream(client, 'please, rate limited once');
      const before: StreamResponse[] = [];
      for (let next = await stream.next(); !next.done; next = await stream.next()) {
        before.push(next.value);
        if (noticeOf(next.value)) break;
      }
      const notice = noticeOf(before.at(-1)!);
      assert.ok(notice, 'a notice came while the retry waits');
      assert.equal(notice.kind, RETRYING_NOTICE);
      const update = before.at(-1)!.payload!.value as any;
      assert.equal(update.status.state, TaskState.TASK_STATE_WORKING, 'the turn goes on');
      assert.equal(
        textOf(notice.message),
        'Model fixture:small failed: the provider is rate limiting or out of quota (HTTP 429). The provider said: "Rate limit reached for requests". Retrying (attempt 2 of 3)…',
      );
      assert.ok(!before.some((e) => e.payload?.$case === 'artifactUpdate'), 'no reply before the notice');

      release();
      const rest = await collect(stream);
      const final = rest.at(-1)!.payload!.value as any;
      assert.equal(final.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      assert.equal(textOf(final.status.message), 'Here you are.');
      const asked = h.chatRequests().filter((b) => lastMessage(b).content.includes('rate limited once'));
      assert.equal(asked.length, 2);
      assert.equal((asked[1].tools?.length ?? 0) > 0, path.tools, 'the path under test');
    });

    it('a rejected key (401): the final message quotes the provider with the key redacted, and no log line holds the key', async () => {
      const client = await h.client('HTTP+JSON');
      const task = await send(client, 'a bad key');
      assert.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      const text = textOf(task.status?.message);
      assert.ok(
        text.startsWith(
          'Model fixture:small failed: the provider rejected the API key (HTTP 401). The provider said: "Incorrect API key provided: [redacted]. Check your key".',
        ),
        text,
      );
      assert.equal(task.status?.message?.metadata?.[NOTICE_KEY], 'model-failure');
      const failed = logged.filter((l) => l.startsWith('model turn failed'));
      assert.equal(failed.length, 1, logged.join('\n'));
      assert.match(failed[0]!, /Incorrect API key provided: \[redacted\]/);
      for (const l of logged)
        assert.ok(!l.includes(FAKE_KEY) && !l.includes('0123456789abcdef'), `a log line holds the key: ${l}`);
      assert.ok(!JSON.stringify(task).includes('0123456789abcdef'), 'the task holds the key');
    });
  });
}
