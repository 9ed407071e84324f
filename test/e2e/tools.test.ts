/**
 * Tools in the model loop, end to end: the harness on 127.0.0.1 with the fixture model server
 * scripted to call tools, the published filesystem MCP server on a temporary folder (stdio),
 * the fixture MCP server over stdio and over Streamable HTTP. Each test names its rule.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState, type Message, type StreamResponse } from '@a2a-js/sdk';
import { TOOL_CALLS_EXTENSION_URI, toolCallsOf, type ToolCallData } from '../../src/wire.js';
import { lastMessage, unusedBaseURL, type ScriptedToolCall } from '../fixtures/model-server.js';
import { startMcpHttpServer, STDIO_FIXTURE, type RunningMcpHttpServer } from '../fixtures/mcp-server.js';
import { assertValidToolCallParts } from '../support/tool-calls-schema.js';
import {
  collect,
  dataOf,
  send,
  startTestHarness,
  textOf,
  TRANSPORTS,
  type TestHarness,
  sendStream,
} from './support.js';
import { poll } from '../support/wait.js';

const FILESYSTEM_SERVER = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-filesystem/dist/index.js',
);
const NOTES = 'The launch code is 4711.';

/** What the scripted model does: a call chosen by the user's words, then a reply that quotes the result. */
function toolCalls(folder: string) {
  return (body: any): ScriptedToolCall[] | undefined => {
    const last = lastMessage(body);
    if (last.role === 'tool')
      return last.content.includes('stopped during the call')
        ? [{ name: 'fx_echo', arguments: { text: 'again' } }]
        : undefined;
    if (last.role !== 'user') return undefined;
    const words: Record<string, ScriptedToolCall> = {
      'read notes': { name: 'fs_read_text_file', arguments: { path: join(folder, 'notes.txt') } },
      'please fail': { name: 'fx_fail', arguments: {} },
      'please throw': { name: 'fx_throw', arguments: {} },
      'please crash': { name: 'fx_crash', arguments: {} },
      'please hang': { name: 'web_hang', arguments: {} },
      'please huge': { name: 'web_huge', arguments: { size: 50_000 } },
    };
    const found = Object.entries(words).find(([w]) => last.content.includes(w));
    return found ? [found[1]] : undefined;
  };
}

const reply = (body: any) => {
  const last = lastMessage(body);
  return last.role === 'tool' ? `tool said: ${last.content.slice(0, 200)}` : 'plain answer';
};

/** Tool-call reports in stream events or in a history, in order; each checked against the extension's schema (TOOL-1). */
function callsIn(messages: (Message | undefined)[]): ToolCallData[] {
  assertValidToolCallParts(messages);
  return messages.flatMap((m) => toolCallsOf(m?.parts));
}
const statusMessages = (events: StreamResponse[]) =>
  events.map((e) => (e.payload?.$case === 'statusUpdate' ? e.payload.value.status?.message : undefined));

/** The newest report of each call in a history. */
function newestById(history: Message[]): Map<string, ToolCallData> {
  const newest = new Map<string, ToolCallData>();
  for (const call of callsIn(history)) newest.set(call.id, call);
  return newest;
}

let folder: string;
let web: RunningMcpHttpServer;
let h: TestHarness;

before(async () => {
  folder = realpathSync(mkdtempSync(join(tmpdir(), 'tiny-harness-fs-')));
  writeFileSync(join(folder, 'notes.txt'), NOTES);
  web = await startMcpHttpServer();
  h = await startTestHarness({
    script: { toolCalls: toolCalls(folder), reply },
    config: {
      toolOutputChars: 5000,
      mcpServers: {
        fs: { command: process.execPath, args: [FILESYSTEM_SERVER, folder] },
        fx: { ...STDIO_FIXTURE, cwd: process.cwd() },
        web: { url: web.url, headers: { 'X-Fixture': '${FIXTURE_HEADER:-yes}' } },
        gone: { url: new URL('/mcp', await unusedBaseURL()).href },
      },
    },
  });
});

after(async () => {
  await h?.close();
  await web?.close();
  rmSync(folder, { recursive: true, force: true });
});

describe('tools in the model loop', () => {
  for (const transport of TRANSPORTS) {
    it(`TOOL-1 (${transport}): a turn reads a file through the filesystem server and answers with it; the call is streamed and kept`, async () => {
      const client = await h.client(transport);
      const events = await collect(sendStream(client, 'read notes please'));
      const final = events.at(-1)!.payload!.value as any;
      assert.equal(final.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      assert.match(textOf(final.status.message), /4711/, 'the final reply is text quoting the file');
      const streamed = callsIn(statusMessages(events));
      assert.deepEqual(
        streamed.map((c) => c.status),
        ['running', 'succeeded'],
      );
      assert.equal(streamed[0]!.tool, 'fs_read_text_file');
      assert.equal(streamed[0]!.server, 'fs');
      assert.equal(streamed[1]!.output, NOTES);
      const offered = h
        .chatRequests()
        .at(-1)
        .tools.map((t: any) => t.function.name);
      assert.ok(
        offered.includes('fs_read_text_file') && offered.includes('fx_echo') && offered.includes('web_hang'),
        `every connected server's tools are offered: ${offered}`,
      );

      const task = await client.getTask({ tenant: '', id: final.taskId, historyLength: undefined });
      assert.deepEqual(
        callsIn(task.history).map((c) => c.status),
        ['running', 'succeeded'],
        'GetTask shows the call',
      );
      // The next turn sends the call and its result to the model again.
      await send(client, 'and what did it say?', { taskId: final.taskId });
      const messages = h.chatRequests().at(-1).messages;
      const toolMessage = messages.find((m: any) => m.role === 'tool');
      assert.equal(toolMessage?.content, NOTES);
      assert.ok(
        messages.some((m: any) => m.role === 'assistant' && m.tool_calls?.[0]?.function?.name === 'fs_read_text_file'),
      );
    });
  }

  it('TOOL-1: a sub-task runs the same loop with the same tools', async () => {
    const client = await h.client('JSONRPC');
    const parent = await send(client, 'a parent task');
    const ref = (await send(client, '/spawn read notes in a sub-task', { taskId: parent.id })).status!.message!
      .metadata!.task_ref as string;
    const child = await poll('the sub-task completed', async () => {
      const task = await client.getTask({ tenant: '', id: ref, historyLength: undefined });
      return task.status?.state === TaskState.TASK_STATE_COMPLETED ? task : undefined;
    });
    assert.match(textOf(child.status?.message), /4711/);
    assert.deepEqual(
      callsIn(child.history).map((c) => [c.tool, c.status]),
      [
        ['fs_read_text_file', 'running'],
        ['fs_read_text_file', 'succeeded'],
      ],
    );
  });

  it('/tools lists each server, connected or why not, and its tools one line each; an unreachable server leaves the others working', async () => {
    const client = await h.client('HTTP+JSON');
    const task = await send(client, 'read notes');
    assert.match(textOf(task.status?.message), /4711/, 'the server that cannot be reached is left out of the turn');
    const reply = await send(client, '/tools', { taskId: task.id });
    const text = textOf(reply.status?.message);
    assert.match(text, /^fs: connected, 14 tools$/m);
    assert.match(text, /^ {2}fs_read_text_file - /m);
    assert.match(text, /^gone: not connected \(.+\); tried again on next use$/m);
    const servers = dataOf(reply.status?.message).servers;
    assert.deepEqual(
      servers.map((s: any) => [s.name, s.connected]),
      [
        ['fs', true],
        ['fx', true],
        ['web', true],
        ['gone', false],
      ],
    );
    assert.deepEqual(
      servers[1].tools.map((t: any) => t.name),
      [
        'fx_echo',
        'fx_fail',
        'fx_throw',
        'fx_hang',
        'fx_grow',
        'fx_huge',
        'fx_add_prompt',
        'fx_ask',
        'fx_sign_in',
        'fx_crash',
      ],
    );
  });

  it('TOOL-2: a tool that fails gives the model an error result and the turn goes on', async () => {
    const client = await h.client('JSONRPC');
    for (const words of ['please fail', 'please throw']) {
      const task = await send(client, words);
      assert.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      assert.match(textOf(task.status?.message), /^tool said: .*fixture tool (failed|threw)/);
      const full = await client.getTask({ tenant: '', id: task.id, historyLength: undefined });
      assert.deepEqual(
        callsIn(full.history).map((c) => c.status),
        ['running', 'failed'],
      );
    }
  });

  it('TOOL-2: a server that crashes mid-call gives an error result, and is started again on its next use', async () => {
    const client = await h.client('HTTP+JSON');
    const task = await send(client, 'please crash');
    const calls = callsIn((await client.getTask({ tenant: '', id: task.id, historyLength: undefined })).history);
    assert.deepEqual(
      calls.map((c) => [c.tool, c.status]),
      [
        ['fx_crash', 'running'],
        ['fx_crash', 'failed'],
        ['fx_echo', 'running'],
        ['fx_echo', 'succeeded'],
      ],
    );
    assert.match(calls[1]!.output!, /stopped during the call/);
    assert.equal(calls[3]!.output, 'echo: again');
    assert.match(textOf(task.status?.message), /echo: again/);
  });

  it('TOOL-2: output over the bound is cut for the model and the report, with a note; the whole of it is an artifact the report points to', async () => {
    const client = await h.client('GRPC');
    const events = await collect(sendStream(client, 'please huge'));
    const taskId = (events[0]!.payload!.value as any).id as string;
    const stored = await client.getTask({ tenant: '', id: taskId, historyLength: undefined });
    const done = callsIn(stored.history).at(-1)!;
    assert.equal(done.status, 'succeeded');
    assert.match(done.output!, /\[output cut: the first 5000 of 50000 characters are shown\]$/);
    const sent = h
      .chatRequests()
      .at(-1)
      .messages.find((m: any) => m.role === 'tool');
    assert.ok(sent.content.length < 5200);
    assert.ok(done.outputArtifactId, 'the report points to the whole output');
    const artifact = stored.artifacts.find((a) => a.artifactId === done.outputArtifactId);
    assert.equal(textOf({ parts: artifact?.parts } as Message), 'x'.repeat(50_000), 'GetTask holds the whole output');
    const streamedAt = events.findIndex(
      (e) => e.payload?.$case === 'artifactUpdate' && e.payload.value.artifact?.artifactId === done.outputArtifactId,
    );
    const reportedAt = events.findIndex(
      (e) =>
        e.payload?.$case === 'statusUpdate' &&
        toolCallsOf(e.payload.value.status?.message?.parts).some((c) => c.outputArtifactId),
    );
    assert.ok(streamedAt >= 0 && streamedAt < reportedAt, 'the artifact is streamed before the report that names it');
  });

  it('TOOL-1: the card declares the tool-calls extension, not required', async () => {
    const card = await (await h.client('JSONRPC')).getAgentCard();
    const entry = card.capabilities?.extensions?.find((e) => e.uri === TOOL_CALLS_EXTENSION_URI);
    assert.equal(entry?.required, false);
  });

  it('TOOL-4: CancelTask aborts the running tool call (MCP cancellation); no call is left running', async () => {
    const client = await h.client('JSONRPC');
    const cancelledBefore = (await web.hangCancelled(0), 0);
    const stream = sendStream(client, 'please hang');
    const first = await stream.next();
    const taskId = (first.value as any).payload.value.id;
    await web.hangStarted(1);
    await client.cancelTask({ tenant: '', id: taskId, metadata: {} });
    await web.hangCancelled(cancelledBefore + 1);
    const rest: StreamResponse[] = [];
    for await (const event of stream) rest.push(event);
    const task = await client.getTask({ tenant: '', id: taskId, historyLength: undefined });
    assert.equal(task.status?.state, TaskState.TASK_STATE_CANCELED);
    assert.deepEqual(
      [...newestById(task.history).values()].map((c) => c.status),
      ['canceled'],
    );
  });
});

describe('tool timeouts', () => {
  let short: TestHarness;
  let hanging: RunningMcpHttpServer;
  before(async () => {
    hanging = await startMcpHttpServer();
    short = await startTestHarness({
      script: {
        toolCalls: (body) => (lastMessage(body).role === 'user' ? [{ name: 'web_hang', arguments: {} }] : undefined),
        reply,
      },
      config: { toolTimeoutMs: 300, mcpServers: { web: { url: hanging.url } } },
    });
  });
  after(async () => {
    await short?.close();
    await hanging?.close();
  });

  it('TOOL-2: a call that hangs is cut by toolTimeoutMs and cancelled; the model is told and the turn goes on', async () => {
    const client = await short.client('JSONRPC');
    const task = await send(client, 'anything');
    await hanging.hangCancelled(1);
    assert.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.match(textOf(task.status?.message), /tool said: .*did not answer within 300 ms/);
    const calls = callsIn((await client.getTask({ tenant: '', id: task.id, historyLength: undefined })).history);
    assert.deepEqual(
      calls.map((c) => c.status),
      ['running', 'failed'],
    );
  });
});
