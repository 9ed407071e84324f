/**
 * Serving while MCP servers connect: the harness answers the card, commands and turns at once;
 * a server still connecting is shown so by `/tools`, its tools are offered from the first turn
 * after it answers, and a shutdown meanwhile stops it. The slow server is the stdio fixture held
 * on a gate file the test writes (`gatedStdioFixture`), so "before it answers" is certain.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { TOOL_CALLS_EXTENSION_URI } from '../../src/wire.js';
import { lastMessage } from '../fixtures/model-server.js';
import { gatedStdioFixture } from '../fixtures/mcp-server.js';
import { poll, within } from '../support/wait.js';
import { dataOf, send, startTestHarness, textOf, type TestHarness } from './support.js';

let dir: string;
const started: TestHarness[] = [];

/** A harness whose only MCP server, `slow`, answers once `gate` exists; resolved as soon as it serves. */
async function startWithSlowServer(gate: string): Promise<TestHarness> {
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
      config: { mcpServers: { slow: gatedStdioFixture(gate) } },
      waitForTools: false,
    }),
  );
  started.push(h);
  return h;
}

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
  it('the card, /tools and a first turn answer before the server does; its tools are offered from the turn after it answers', async () => {
    const gate = join(dir, 'open-slow');
    const h = await startWithSlowServer(gate);
    await fixturePid(gate);
    const client = await h.client('JSONRPC');

    const card = await client.getAgentCard();
    assert.ok(card.capabilities?.extensions?.some((e) => e.uri === TOOL_CALLS_EXTENSION_URI));

    const first = await within('a turn while the server connects', send(client, 'hello'));
    assert.equal(first.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(textOf(first.status?.message), 'plain');
    assert.deepEqual(offered(h), [], 'a turn while the server connects is offered none of its tools');

    const connecting = await send(client, '/tools', { taskId: first.id });
    assert.equal(textOf(connecting.status?.message), 'slow: connecting; its tools are offered once it answers');
    assert.deepEqual(
      dataOf(connecting.status?.message).servers.map((s: any) => [s.name, s.connecting, s.connected, s.tools.length]),
      [['slow', true, false, 0]],
    );

    writeFileSync(gate, '');
    await within('the MCP server answering', h.harness.toolsAnswered());

    const later = await send(client, 'please echo');
    assert.equal(textOf(later.status?.message), 'tool said: echo: hi');
    assert.ok(offered(h).includes('slow_echo'), `the next turn is offered its tools: ${offered(h)}`);
    const connected = await send(client, '/tools', { taskId: later.id });
    assert.match(textOf(connected.status?.message), /^slow: connected, 8 tools$/m);
    assert.deepEqual(
      dataOf(connected.status?.message).servers.map((s: any) => [s.name, s.connecting, s.connected]),
      [['slow', false, true]],
    );
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
