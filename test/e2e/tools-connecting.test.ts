/**
 * Serving while MCP servers connect: the harness answers the card, commands and turns at once;
 * a server still connecting is shown so by `/tools`; a turn that starts meanwhile waits for it
 * up to `mcpConnectWaitMs` and gets its tools when it answers within that, or runs without them
 * past it, its stream saying so (a `tools-missing` notice naming the server); and a shutdown
 * meanwhile stops it. The slow server is the stdio fixture held on a gate file the test writes
 * (`gatedStdioFixture`), so "before it answers" is certain.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import type { StreamResponse } from '@a2a-js/sdk';
import { NOTICE_KEY, TOOL_CALLS_EXTENSION_URI, TOOLS_MISSING_NOTICE } from '../../src/wire.js';
import { lastMessage } from '../fixtures/model-server.js';
import { gatedStdioFixture } from '../fixtures/mcp-server.js';
import { poll, within } from '../support/wait.js';
import { collect, dataOf, send, sendStream, startTestHarness, textOf, type TestHarness } from './support.js';

let dir: string;
const started: TestHarness[] = [];

/**
 * A harness whose only MCP server, `slow`, answers once `gate` exists; resolved as soon as it
 * serves. A turn waits `waitMs` for the server (`mcpConnectWaitMs`).
 */
async function startWithSlowServer(gate: string, waitMs: number): Promise<TestHarness> {
  const h = await within(
    'the harness serving before its MCP server answers',
    startTestHarness({
      script: {
        toolCalls: (body) =>
          lastMessage(body).role === 'user' && lastMessage(body).content.includes('echo')
            ? [{ name: 'slow_echo', arguments: { text: 'hi' } }]
            : undefined,
        reply: (body) => (lastMessage(body).role === 'tool' ? `tool said: ${lastMessage(body).content}` : 'plain'),
      },
      config: { mcpServers: { slow: gatedStdioFixture(gate) }, mcpConnectWaitMs: waitMs },
      waitForTools: false,
    }),
  );
  started.push(h);
  return h;
}

/** The `tools-missing` notices of a turn's stream: WORKING status messages, with their data. */
const missingNotices = (events: readonly StreamResponse[]) =>
  events.flatMap((event) => {
    const message = event.payload?.$case === 'statusUpdate' ? event.payload.value.status?.message : undefined;
    return message?.metadata?.[NOTICE_KEY] === TOOLS_MISSING_NOTICE
      ? [{ state: (event.payload!.value as any).status.state, text: textOf(message), data: dataOf(message) }]
      : [];
  });

/** The names of the tools the model was offered in its last request. */
const offered = (h: TestHarness): string[] => (h.chatRequests().at(-1).tools ?? []).map((t: any) => t.function.name);

/** The fixture's process id, once it has started and is waiting on its gate. */
const fixturePid = (gate: string) =>
  poll('the MCP server process started', () => {
    try {
      return Number(readFileSync(`${gate}.pid`, 'utf8')) || undefined;
    } catch {
      return undefined;
    }
  });

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'tiny-harness-tools-connecting-'));
});

after(async () => {
  await Promise.all(started.map((h) => h.close()));
  rmSync(dir, { recursive: true, force: true });
});

describe('serving while an MCP server connects', () => {
  it('a turn that starts while the server connects waits for it, and gets its tools when it answers within mcpConnectWaitMs', async () => {
    const gate = join(dir, 'open-during-turn');
    // A bound no test outlasts: the turn can only go on because the server answered.
    const h = await startWithSlowServer(gate, 600_000);
    await fixturePid(gate);
    const client = await h.client('JSONRPC');

    const stream = sendStream(client, 'please echo');
    const first = await within('the turn started', stream.next());
    assert.equal(first.value?.payload?.$case, 'task', 'the turn has started (its task is out)');
    assert.equal(h.chatRequests().length, 0, 'the model is not asked while the server connects');

    writeFileSync(gate, '');
    const events = await collect(stream);
    const final = events.at(-1)!.payload!.value as any;
    assert.equal(textOf(final.status.message), 'tool said: echo: hi');
    assert.ok(offered(h).includes('slow_echo'), `the turn is offered the server's tools: ${offered(h)}`);
    assert.ok(
      h.chatRequests()[0].tools?.some((t: any) => t.function.name === 'slow_echo'),
      "the turn's first request",
    );
    assert.deepEqual(missingNotices(events), [], 'no tool is missing');
  });

  it('past mcpConnectWaitMs the turn runs without its tools, its stream naming the server; /tools says connecting; later turns get them', async () => {
    const gate = join(dir, 'open-slow');
    const h = await startWithSlowServer(gate, 50);
    await fixturePid(gate);
    const client = await h.client('JSONRPC');

    const card = await client.getAgentCard();
    assert.ok(card.capabilities?.extensions?.some((e) => e.uri === TOOL_CALLS_EXTENSION_URI));

    const events = await within('a turn while the server connects', collect(sendStream(client, 'hello')));
    const firstTurn = events.at(-1)!.payload!.value as any;
    assert.equal(firstTurn.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(textOf(firstTurn.status.message), 'plain');
    assert.deepEqual(offered(h), [], 'a turn past the wait is offered none of its tools');
    assert.deepEqual(missingNotices(events), [
      {
        state: TaskState.TASK_STATE_WORKING,
        text: 'The MCP server "slow" has not answered yet (waited 50 ms): this turn runs without its tools, which later turns get once it answers.',
        data: { missing: [{ server: 'slow', why: 'connecting', waitedMs: 50 }] },
      },
    ]);
    const noticeAt = events.findIndex((e) => missingNotices([e]).length > 0);
    const replyAt = events.findIndex((e) => e.payload?.$case === 'artifactUpdate');
    assert.ok(noticeAt < replyAt, 'the notice comes before the reply it explains');

    const connecting = await send(client, '/tools', { taskId: firstTurn.taskId });
    assert.equal(textOf(connecting.status?.message), 'slow: connecting; its tools are offered once it answers');
    assert.deepEqual(
      dataOf(connecting.status?.message).servers.map((s: any) => [s.name, s.connecting, s.connected, s.tools.length]),
      [['slow', true, false, 0]],
    );

    writeFileSync(gate, '');
    await within('the MCP server answering', h.harness.toolsAnswered());

    const later = await collect(sendStream(client, 'please echo'));
    const laterEnd = later.at(-1)!.payload!.value as any;
    assert.equal(textOf(laterEnd.status.message), 'tool said: echo: hi');
    assert.ok(offered(h).includes('slow_echo'), `the next turn is offered its tools: ${offered(h)}`);
    assert.deepEqual(missingNotices(later), [], 'nothing is missing any more');
    const connected = await send(client, '/tools', { taskId: laterEnd.taskId });
    assert.match(textOf(connected.status?.message), /^slow: connected, 10 tools$/m);
    assert.deepEqual(
      dataOf(connected.status?.message).servers.map((s: any) => [s.name, s.connecting, s.connected]),
      [['slow', false, true]],
    );
  });

  it('a turn waiting for a server is canceled at once, without waiting for it', async () => {
    const gate = join(dir, 'never-opened-cancel');
    const h = await startWithSlowServer(gate, 600_000);
    await fixturePid(gate);
    const client = await h.client('JSONRPC');
    const stream = sendStream(client, 'hello');
    const first = await within('the turn started', stream.next());
    const taskId = (first.value!.payload!.value as any).id;
    const rest = collect(stream);
    await client.cancelTask({ tenant: '', id: taskId, metadata: {} });
    const events = await rest;
    assert.equal((events.at(-1)!.payload!.value as any).status.state, TaskState.TASK_STATE_CANCELED);
    assert.equal(h.chatRequests().length, 0, 'the model was never asked');
  });

  it('a shutdown while a server is still connecting stops its process and logs no failure', async () => {
    const gate = join(dir, 'never-opened');
    const warnings: string[] = [];
    const log = {
      debug: () => {},
      info: () => {},
      warn: (message: string) => void warnings.push(message),
      error: (message: string) => void warnings.push(message),
    };
    // A connect timeout no wait outlasts: a shutdown that waited for the server would never end.
    const h = await within(
      'the harness serving before its MCP server answers',
      startTestHarness({
        config: { toolTimeoutMs: 3_600_000, mcpServers: { slow: gatedStdioFixture(gate) } },
        harness: { log },
        waitForTools: false,
      }),
    );
    started.push(h);
    const pid = await fixturePid(gate);
    assert.ok(alive(pid));
    await within('the shutdown', h.harness.close());
    await within('the first attempt settling', h.harness.toolsAnswered());
    // Stopped by close(); its exit, a signal's, is seen by the OS a moment after.
    await poll('the MCP server process gone', () => !alive(pid));
    assert.deepEqual(warnings, [], 'a stop is no failure of the server');
  });
});
