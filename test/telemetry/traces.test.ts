/**
 * Traces, in process: OpenTelemetry's Node SDK started as `serve` starts it, its spans kept by
 * an in-memory exporter; the harness on 127.0.0.1 with the fixture model (scripted to call a
 * tool) and the fixture MCP server over Streamable HTTP. The span tree of a turn, of a command
 * that starts a sub-task, a caller's trace continued over each transport, and content kept out
 * of spans unless the harness logs content.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import { tracing } from '@opentelemetry/sdk-node';
import { TaskState, type Task } from '@a2a-js/sdk';
import { lastMessage, type ScriptedToolCall } from '../fixtures/model-server.js';
import { startMcpHttpServer, type RunningMcpHttpServer } from '../fixtures/mcp-server.js';
import {
  collect,
  send,
  sendStream,
  startTestHarness,
  textOf,
  TRANSPORTS,
  userMessage,
  type TestHarness,
} from '../e2e/support.js';
import { poll } from '../support/wait.js';
import { deduped, startReceiver } from '../e2e/push-receiver.js';
import { startTracing, type Tracing } from '../../src/telemetry/tracing-sdk.js';
import { TRACE_PARENT_KEY } from '../../src/telemetry/traces.js';
import { toolCallsOf } from '../../src/wire.js';

type Span = tracing.ReadableSpan;

const SECRET_WORDS = 'zebra-marmalade';
const toolCalls = (body: any): ScriptedToolCall[] | undefined => {
  const last = lastMessage(body);
  return last.role === 'user' && last.content.includes('please echo')
    ? [{ name: 'web_echo', arguments: { text: SECRET_WORDS } }]
    : undefined;
};
const reply = (body: any) => {
  const last = lastMessage(body);
  return last.role === 'tool' ? `tool said: ${last.content}` : `plain answer`;
};

let exporter: tracing.InMemorySpanExporter;
let tracingSdk: Tracing;
let web: RunningMcpHttpServer;
let h: TestHarness;

before(async () => {
  exporter = new tracing.InMemorySpanExporter();
  tracingSdk = startTracing({ spanProcessors: [new tracing.SimpleSpanProcessor(exporter)], env: {} });
  web = await startMcpHttpServer();
  h = await startTestHarness({
    script: { toolCalls, reply },
    config: { mcpServers: { web: { url: web.url } } },
  });
});

after(async () => {
  await h?.close();
  await web?.close();
  await tracingSdk?.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
});

const spanId = (span: Span) => span.spanContext().spanId;
const traceId = (span: Span) => span.spanContext().traceId;
const parentOf = (span: Span) => span.parentSpanContext?.spanId;
const spans = () => exporter.getFinishedSpans();
/** The finished spans of one trace, once `check` finds what it waits for in them. */
const spansOf = (id: string, what: string, check: (found: Span[]) => boolean) =>
  poll(what, () => {
    const found = spans().filter((span) => traceId(span) === id);
    return check(found) ? found : undefined;
  });
const one = (found: Span[], name: string): Span => {
  const matching = found.filter((span) => span.name === name);
  assert.equal(matching.length, 1, `one span named ${name} in ${found.map((s) => s.name).join(', ')}`);
  return matching[0]!;
};
/** A `traceparent` with the given trace id and span id (sampled). */
const traceparent = (trace: string, span: string) => `00-${trace}-${span}-01`;

describe('traces', () => {
  it("issue 39: a scheduled run is a trace of its own: a root span `schedule run`, the run's turn under it", async () => {
    const client = await h.client('JSONRPC');
    const first = await send(client, 'hello');
    // An `at` time a second or two ahead, to the second: the scheduler (polling each second) starts it.
    const at = `${new Date(Math.ceil((Date.now() + 1000) / 1000) * 1000).toISOString().slice(0, 19)}Z`;
    await send(client, `/schedule at ${at} a traced run`, { taskId: first.id });
    const root = await poll('the run span', () => spans().find((s) => s.name === 'schedule run'));
    assert.equal(root.parentSpanContext, undefined, 'a root span');
    assert.match(String(root.attributes['tiny_harness.schedule.id']), /^s[0-9a-f]{10}$/);
    const turn = await poll('the run turn span', () =>
      spans().find((s) => s.name === 'invoke_agent tiny-harness' && parentOf(s) === spanId(root)),
    );
    assert.equal(traceId(turn), traceId(root));
  });

  it('TRACE-1: a turn with a tool call is one tree: SendStreamingMessage → invoke_agent → chat spans and execute_tool, with the GenAI attributes', async () => {
    const client = await h.client('JSONRPC');
    const events = await collect(sendStream(client, 'please echo something'));
    const final = events.at(-1)!.payload!.value as any;
    assert.equal(final.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const turn = spans().find(
      (s) => s.name === 'invoke_agent tiny-harness' && s.attributes['gen_ai.agent.a2a.task_id'] === final.taskId,
    );
    assert.ok(turn, 'the turn has its invoke_agent span');
    const found = await spansOf(traceId(turn), 'the turn and its request span ended', (f) =>
      f.some((s) => s.name === 'SendStreamingMessage'),
    );

    const server = one(found, 'SendStreamingMessage');
    assert.equal(server.kind, SpanKind.SERVER);
    assert.equal(server.attributes['gen_ai.agent.a2a.operation.name'], 'SendStreamingMessage');
    assert.equal(server.attributes['gen_ai.agent.a2a.role'], 'ROLE_USER');
    assert.equal(server.attributes['gen_ai.agent.a2a.parts.number'], 1);
    assert.equal(parentOf(turn), spanId(server), 'the turn is a child of the A2A call');
    assert.equal(turn.attributes['gen_ai.operation.name'], 'invoke_agent');
    assert.equal(turn.attributes['gen_ai.agent.name'], 'tiny-harness');
    assert.equal(turn.attributes['gen_ai.conversation.id'], final.contextId);
    assert.equal(turn.status.code, SpanStatusCode.UNSET);

    const chats = found.filter((s) => s.name === 'chat small');
    assert.equal(chats.length, 2, 'one chat span per model request: the call, then the answer');
    for (const chat of chats) {
      assert.equal(parentOf(chat), spanId(turn));
      assert.equal(chat.kind, SpanKind.CLIENT);
      assert.equal(chat.attributes['gen_ai.operation.name'], 'chat');
      assert.equal(chat.attributes['gen_ai.provider.name'], 'fixture');
      assert.equal(chat.attributes['gen_ai.request.model'], 'small');
      assert.equal(chat.attributes['gen_ai.conversation.id'], final.contextId);
      assert.ok((chat.attributes['gen_ai.usage.input_tokens'] as number) > 0, 'input tokens');
      assert.ok((chat.attributes['gen_ai.usage.output_tokens'] as number) > 0, 'output tokens');
    }
    assert.deepEqual(
      chats.map((chat) => chat.attributes['gen_ai.response.finish_reasons']),
      [['tool-calls'], ['stop']],
    );

    const tool = one(found, 'execute_tool web_echo');
    assert.equal(parentOf(tool), spanId(turn), 'the tool call is a child of the turn');
    assert.equal(tool.attributes['gen_ai.operation.name'], 'execute_tool');
    assert.equal(tool.attributes['gen_ai.tool.name'], 'web_echo');
    const task = await client.getTask({ tenant: '', id: final.taskId, historyLength: undefined });
    const callId = task.history.flatMap((m) => toolCallsOf(m.parts))[0]!.id;
    assert.equal(tool.attributes['gen_ai.tool.call.id'], callId, 'the call id the task shows');

    // The trace went on into the model provider (from its chat span) and the MCP server (from the tool's span).
    const sent = h.model.requests.filter((r) => r.path.endsWith('/chat/completions')).slice(-2);
    assert.deepEqual(
      sent.map((r) => r.traceparent),
      chats.map((chat) => traceparent(traceId(chat), spanId(chat))),
    );
    assert.equal(web.toolCallTraceparents.at(-1), traceparent(traceId(tool), spanId(tool)));
  });

  it('TRACE-2: a command is an execute_command span, and the sub-task it starts runs its turn as that span’s child', async () => {
    const client = await h.client('JSONRPC');
    const parent = (await send(client, 'hello')) as Task;
    const replied = (await send(client, '/spawn look into it', { taskId: parent.id })) as Task;
    const ref = (replied.status?.message?.metadata as any)?.task_ref as string;
    assert.ok(ref, `the reply names the sub-task: ${textOf(replied.status?.message)}`);

    const command = spans().find(
      (s) => s.name === 'execute_command /spawn' && s.attributes['gen_ai.agent.a2a.task_id'] === parent.id,
    );
    assert.ok(command, 'the command has its span');
    assert.equal(command.attributes['tiny-harness.command.name'], 'spawn');
    assert.equal(command.attributes['gen_ai.conversation.id'], parent.contextId);
    const found = await spansOf(traceId(command), "the sub-task's turn ended", (f) =>
      f.some((s) => s.name === 'invoke_agent tiny-harness' && s.attributes['gen_ai.agent.a2a.task_id'] === ref),
    );
    const server = one(found, 'SendMessage');
    assert.equal(parentOf(command), spanId(server), 'the command is a child of the A2A call');
    const subturn = one(found, 'invoke_agent tiny-harness');
    assert.equal(parentOf(subturn), spanId(command), "the sub-task's turn is a child of the command");
    assert.equal(one(found, 'chat small').parentSpanContext?.spanId, spanId(subturn));

    // The trace context is stored with the sub-task, for whichever instance runs its turn.
    const subtask = await client.getTask({ tenant: '', id: ref, historyLength: undefined });
    assert.equal(subtask.metadata?.[TRACE_PARENT_KEY], traceparent(traceId(command), spanId(command)));
  });

  for (const transport of TRANSPORTS) {
    it(`TRACE-3 (${transport}): a call with a traceparent continues the caller's trace`, async () => {
      const callerTrace = [...crypto.getRandomValues(new Uint8Array(16))]
        .map((b) => b.toString(16).padStart(2, '0'))
        .join('');
      const callerSpan = 'b7ad6b7169203331';
      const client = await h.client(transport, { traceparent: traceparent(callerTrace, callerSpan) });
      const task = (await send(client, 'hello from a traced caller')) as Task;
      const found = await spansOf(
        callerTrace,
        'the traced call ended',
        (f) => f.some((s) => s.name === 'SendMessage') && f.some((s) => s.name === 'invoke_agent tiny-harness'),
      );
      const server = one(found, 'SendMessage');
      assert.equal(parentOf(server), callerSpan, "the server span's parent is the caller's span");
      assert.equal(server.parentSpanContext?.isRemote, true);
      assert.equal(server.attributes['gen_ai.agent.a2a.task_id'], undefined, 'a new task: no id was sent');
      const turn = one(found, 'invoke_agent tiny-harness');
      assert.equal(turn.attributes['gen_ai.agent.a2a.task_id'], task.id);
      assert.equal(parentOf(turn), spanId(server));
    });
  }

  it('TRACE-6: each push POST carries a traceparent in the trace of the turn that logged its event', async (t) => {
    const pushing = await startTestHarness({
      script: { reply: 'pushed answer' },
      config: { push: { allowPrivateNetworks: true } },
    });
    const receiver = await startReceiver();
    t.after(async () => {
      await pushing.close();
      await receiver.close();
    });
    const client = await pushing.client('JSONRPC');
    const turnOf = (taskId: string, nth: number) =>
      poll(`turn ${nth} of the task traced`, () => {
        const turns = spans().filter(
          (s) => s.name === 'invoke_agent tiny-harness' && s.attributes['gen_ai.agent.a2a.task_id'] === taskId,
        );
        return turns.length >= nth ? turns[nth - 1] : undefined;
      });
    const turnsEnded = () =>
      deduped(receiver.received).filter(
        (x) => x.kind === 'statusUpdate' && !/WORKING|SUBMITTED/.test(String(x.body.statusUpdate.status?.state)),
      ).length;
    // Two turns on one task, each a call of its own and so a trace of its own.
    const events = await collect(
      client.sendMessageStream({
        tenant: '',
        message: userMessage('first turn'),
        configuration: {
          acceptedOutputModes: [],
          taskPushNotificationConfig: {
            tenant: '',
            id: 'traced',
            taskId: '',
            url: receiver.url,
            token: '',
            authentication: undefined,
          },
          returnImmediately: false,
        },
        metadata: {},
      }),
    );
    const first = events.at(-1)!.payload!.value as { taskId: string };
    await poll('the first turn delivered', () => turnsEnded() === 1);
    const firstCount = receiver.received.length;
    await collect(sendStream(client, 'second turn', { taskId: first.taskId }));
    await poll('the second turn delivered', () => turnsEnded() === 2);
    const traces = [traceId(await turnOf(first.taskId, 1)), traceId(await turnOf(first.taskId, 2))];
    assert.notEqual(traces[0], traces[1]);
    receiver.received.forEach((post, i) => {
      const header = String(post.headers.traceparent ?? '');
      assert.match(header, /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/, `POST ${i + 1} has a traceparent`);
      assert.equal(header.split('-')[1], traces[i < firstCount ? 0 : 1], `POST ${i + 1} is in its turn's trace`);
    });
  });

  it('TRACE-4: no message or tool content in any span without --log-content', () => {
    const all = spans();
    assert.ok(all.length > 0);
    const contentKeys = [
      'gen_ai.input.messages',
      'gen_ai.output.messages',
      'gen_ai.system_instructions',
      'gen_ai.tool.call.arguments',
      'gen_ai.tool.call.result',
    ];
    for (const span of all) {
      for (const [key, value] of Object.entries(span.attributes)) {
        assert.ok(!contentKeys.includes(key), `${span.name} has ${key}`);
        const text = JSON.stringify(value);
        for (const said of [SECRET_WORDS, 'please echo', 'plain answer', 'look into it', 'hello'])
          assert.ok(!text.includes(said), `${span.name}.${key} holds "${said}"`);
      }
    }
  });

  it('TRACE-5: with --log-content, the spans carry the conventions’ content attributes', async () => {
    const logging = await startTestHarness({
      script: { toolCalls, reply },
      config: { mcpServers: { web: { url: web.url } } },
      harness: { logContent: true },
    });
    try {
      const client = await logging.client('JSONRPC');
      const final = (await send(client, 'please echo with content')) as Task;
      const turn = await poll('the logged turn', () =>
        spans().find(
          (s) => s.name === 'invoke_agent tiny-harness' && s.attributes['gen_ai.agent.a2a.task_id'] === final.id,
        ),
      );
      const found = spans().filter((s) => traceId(s) === traceId(turn));
      const tool = one(found, 'execute_tool web_echo');
      assert.equal(tool.attributes['gen_ai.tool.call.arguments'], JSON.stringify({ text: SECRET_WORDS }));
      assert.equal(tool.attributes['gen_ai.tool.call.result'], `echo: ${SECRET_WORDS}`);
      const [first, second] = found.filter((s) => s.name === 'chat small');
      const input = JSON.parse(first!.attributes['gen_ai.input.messages'] as string);
      assert.deepEqual(input.at(-1), { role: 'user', parts: [{ type: 'text', content: 'please echo with content' }] });
      const output = JSON.parse(second!.attributes['gen_ai.output.messages'] as string);
      assert.equal(output[0].parts[0].content, textOf(final.status?.message));
    } finally {
      await logging.close();
    }
  });
});
