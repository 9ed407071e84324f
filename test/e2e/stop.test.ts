/**
 * `/stop` (CMD-32): the running turn ends as a finished turn ends, its partial reply kept and
 * marked, the provider request and any tool call aborted; the conversation goes on. The
 * fixture model holds its reply after two chunks until the test lets it go (it never does
 * here), and the fixture MCP server over HTTP has a tool that hangs until cancelled.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import { toolCallsOf } from '../../src/wire.js';
import { lastMessage, type ScriptedToolCall } from '../fixtures/model-server.js';
import { startMcpHttpServer, type RunningMcpHttpServer } from '../fixtures/mcp-server.js';
import { send, startTestHarness, textOf, TRANSPORTS, type TestHarness, sendStream } from './support.js';

const REPLY = 'alpha beta gamma delta epsilon';
const never = new Promise<void>(() => {});

let web: RunningMcpHttpServer;
let h: TestHarness;

before(async () => {
  web = await startMcpHttpServer();
  h = await startTestHarness({
    script: {
      reply: (body) => (lastMessage(body).role === 'tool' ? 'after the tool' : REPLY),
      hold: (body) => (lastMessage(body).content.includes('hold on') ? { afterChunks: 2, until: never } : undefined),
      toolCalls: (body): ScriptedToolCall[] | undefined =>
        lastMessage(body).role === 'user' && lastMessage(body).content.includes('please hang')
          ? [{ name: 'web_hang', arguments: {} }]
          : undefined,
    },
    config: { mcpServers: { web: { url: web.url } } },
  });
});

after(async () => {
  await h?.close();
  await web?.close();
});

/** Starts a streamed turn; resolves once `ready` says enough has arrived, with the task id and the rest of the stream. */
async function startTurn(
  client: Awaited<ReturnType<TestHarness['client']>>,
  text: string,
  ready: (events: StreamResponse[]) => boolean,
  taskId?: string,
) {
  const stream = sendStream(client, text, { taskId });
  const events: StreamResponse[] = [];
  let resolveReady!: () => void;
  const isReady = new Promise<void>((resolve) => (resolveReady = resolve));
  const ended = (async () => {
    for await (const event of stream) {
      events.push(event);
      if (ready(events)) resolveReady();
    }
    resolveReady();
    return events;
  })();
  await isReady;
  const first = events[0]!.payload!;
  return { taskId: first.$case === 'task' ? first.value.id : (first.value as { taskId: string }).taskId, ended };
}

const chunks = (events: StreamResponse[]) => events.filter((e) => e.payload?.$case === 'artifactUpdate').length;

describe('/stop (CMD-32)', () => {
  for (const transport of TRANSPORTS) {
    it(`CMD-32 (${transport}): /stop replies at once, then the turn ends as a finished one, its partial reply kept and marked; the model is sent it next turn`, async () => {
      const client = await h.client(transport);
      const aborted = h.model.aborted;
      const turn = await startTurn(client, 'please hold on', (events) => chunks(events) >= 1);
      const reply = await send(client, '/stop', { taskId: turn.taskId });
      assert.equal(
        textOf(reply.status?.message),
        'Stopping the turn. What the model wrote so far is kept, marked as stopped.',
      );
      assert.equal(reply.status?.state, TaskState.TASK_STATE_WORKING, 'state unchanged: the turn was running');
      await h.model.waitForAborted(aborted + 1);
      const events = await turn.ended;
      const final = (events.at(-1)!.payload!.value as any).status;
      assert.equal(
        final.state,
        TaskState.TASK_STATE_INPUT_REQUIRED,
        'the task waits for the next message, not canceled',
      );
      assert.equal(textOf(final.message), 'alpha beta\n\n[stopped by the user]');
      const stopAt = events.findIndex(
        (e) => e.payload?.$case === 'statusUpdate' && e.payload.value.status?.message?.metadata?.command === 'stop',
      );
      assert.ok(stopAt > 0 && stopAt < events.length - 1, "the reply reached the turn's stream before its end");

      await send(client, 'and then?', { taskId: turn.taskId });
      const sent = h.chatRequests().at(-1).messages;
      assert.ok(
        sent.some((m: any) => m.role === 'user' && m.content === 'please hold on'),
        'the conversation is kept',
      );
      assert.ok(
        sent.some((m: any) => m.role === 'assistant' && m.content === 'alpha beta\n\n[stopped by the user]'),
        'with the partial reply, marked',
      );
      assert.ok(!JSON.stringify(sent).includes('/stop'), 'the command is not sent to the model');
    });
  }

  it('CMD-32: /stop on an idle task says there is nothing to stop, and changes nothing', async () => {
    const client = await h.client('JSONRPC');
    const task = await send(client, 'hello');
    const reply = await send(client, '/stop', { taskId: task.id });
    assert.equal(textOf(reply.status?.message), 'Nothing to stop: no turn is running on this task.');
    assert.equal(reply.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
  });

  it('CMD-32, TOOL-4: /stop in the middle of a tool call cancels the call (MCP cancellation); none is left running', async () => {
    const client = await h.client('HTTP+JSON');
    const turn = await startTurn(client, 'please hang', (events) => events.length >= 1);
    await web.hangStarted(1);
    await send(client, '/stop', { taskId: turn.taskId });
    await web.hangCancelled(1);
    const events = await turn.ended;
    assert.equal((events.at(-1)!.payload!.value as any).status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const task = await client.getTask({ tenant: '', id: turn.taskId, historyLength: undefined });
    const newest = new Map(task.history.flatMap((m) => toolCallsOf(m.parts)).map((c) => [c.id, c.status]));
    assert.deepEqual([...newest.values()], ['canceled']);
  });
});
