/**
 * TOOL-4 across a stop: a server killed, or stopped, while a tool call runs comes back with the
 * turn ended as interrupted and no call showing as running. The harness runs as a child process
 * (the real command line); the MCP server is the fixture over Streamable HTTP, in this process,
 * so that the test knows when the call is running.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState, type Message } from '@a2a-js/sdk';
import { toolCallsOf, type ToolCallData } from '../../src/wire.js';
import { lastMessage, startModelServer, type RunningModelServer } from '../fixtures/model-server.js';
import { startMcpHttpServer, type RunningMcpHttpServer } from '../fixtures/mcp-server.js';
import { startServerProcess, writeFixtureConfig, type ServerProcess } from './process.js';
import { createClient, sendStream } from './support.js';

let model: RunningModelServer;
let web: RunningMcpHttpServer;
let dir: string;
let configFile: string;
const running: ServerProcess[] = [];

async function start(): Promise<ServerProcess> {
  const server = await startServerProcess(['--data-dir', join(dir, 'data'), '--config', configFile]);
  running.push(server);
  return server;
}

/** The newest report of each call in a history. */
function newestById(history: Message[]): ToolCallData[] {
  const newest = new Map<string, ToolCallData>();
  for (const message of history) for (const call of toolCallsOf(message.parts)) newest.set(call.id, call);
  return [...newest.values()];
}

before(async () => {
  model = await startModelServer({
    toolCalls: (body) => (lastMessage(body).role === 'user' ? [{ name: 'web_hang', arguments: {} }] : undefined),
  });
  web = await startMcpHttpServer();
  dir = mkdtempSync(join(tmpdir(), 'tiny-harness-tools-restart-'));
  configFile = writeFixtureConfig(dir, model.baseURL);
  const config = JSON.parse(readFileSync(configFile, 'utf8'));
  writeFileSync(configFile, JSON.stringify({ ...config, mcpServers: { web: { url: web.url } } }));
});

after(async () => {
  await Promise.all(running.map((server) => server.stop('SIGKILL')));
  await web?.close();
  await model?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a stop in the middle of a tool call', () => {
  let hangs = 0;
  for (const [signal, how] of [
    ['SIGKILL', 'a crash (recovery at start-up)'],
    ['SIGTERM', 'a clean stop (the turn ends as interrupted)'],
  ] as const) {
    it(`TOOL-4: after ${how}, the turn is interrupted and no call shows as running`, async () => {
      const first = await start();
      // It serves before its MCP server answers; the turn must be offered the server's tool.
      await first.logged('the MCP server connected', /MCP server connected/);
      const client = await createClient(first.url, 'JSONRPC');
      const stream = sendStream(client, 'hang on');
      const taskId = ((await stream.next()).value as any).payload.value.id as string;
      // The running call is stored before it is streamed: once seen, a kill cannot lose it.
      for (let next = await stream.next(); ; next = await stream.next()) {
        assert.equal(next.done, false, 'the stream showed the call running');
        const message =
          next.value?.payload?.$case === 'statusUpdate' ? next.value.payload.value.status?.message : undefined;
        if (toolCallsOf(message?.parts).some((c) => c.status === 'running')) break;
      }
      await web.hangStarted(++hangs);
      await first.stop(signal);
      await stream.return(undefined).catch(() => undefined);

      const second = await start();
      const again = await createClient(second.url, 'HTTP+JSON');
      const task = await again.getTask({ tenant: '', id: taskId, historyLength: undefined });
      assert.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      const calls = newestById(task.history);
      assert.deepEqual(
        calls.map((c) => [c.tool, c.status]),
        [['web_hang', 'canceled']],
      );
      await second.stop('SIGTERM');
    });
  }
});
