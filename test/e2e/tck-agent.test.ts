/**
 * Issue 37: examples/tck-agent.mjs, the agent the official A2A TCK (1.0 line) grades, acts out
 * each scenario of the TCK's scenarios/*.feature on the harness, by message-id prefix: tested here
 * as the TCK drives it (the TCK itself needs pytest 8 from PyPI), on JSON-RPC, HTTP+JSON and gRPC.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { TaskState, type Artifact, type Message, type Part, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { AgentExecutor } from '@a2a-js/sdk/server';
import { collect, startTestHarness, TRANSPORTS, type TestHarness, userMessage } from './support.js';
import { startReceiver, type Receiver } from './push-receiver.js';
import { poll } from '../support/wait.js';

const EXAMPLE = '../../examples/tck-agent.mjs';
const { createTckAgent, SCENARIOS } = (await import(EXAMPLE)) as {
  createTckAgent(options?: { longRun?: (taskId: string) => Promise<void> }): AgentExecutor;
  SCENARIOS: { prefix: string }[];
};
/** The configuration `npm run tck:agent` serves with. */
const TCK_CONFIG = JSON.parse(readFileSync(new URL('../../examples/tck-agent.json', import.meta.url), 'utf8'));

/**
 * Each message gets an id of its own that starts with its scenario's prefix. (The TCK's `tck_id`
 * gives one id to each name for a whole run, so it sends some messages twice, id and text alike:
 * `npm run tck:agent` keeps no record of message ids for it, `messageIdRetentionMs: 0`; CMD-34,
 * docs/conformance.md.)
 */
const SESSION = randomUUID().slice(0, 8);
const idFor = (prefix: string) => `${prefix}-${randomUUID()}`;

const S = TaskState;
const FILE = 'output.txt text/plain';
/** What each scenario ends in: its state, its final message, its artifacts' parts, and its stream after the task event. */
const EXPECTED: Record<string, { state: TaskState; said?: string; artifacts: string[][]; stream: string[] }> = {
  'tck-complete-task': { state: S.TASK_STATE_COMPLETED, said: 'Hello from TCK', artifacts: [], stream: ['COMPLETED'] },
  'tck-artifact-text': {
    state: S.TASK_STATE_COMPLETED,
    artifacts: [['text:Generated text content']],
    stream: ['artifact', 'COMPLETED'],
  },
  'tck-artifact-file': {
    state: S.TASK_STATE_COMPLETED,
    artifacts: [[`raw:tck ${FILE}`]],
    stream: ['artifact', 'COMPLETED'],
  },
  'tck-artifact-file-url': {
    state: S.TASK_STATE_COMPLETED,
    artifacts: [[`url:https://example.com/output.txt ${FILE}`]],
    stream: ['artifact', 'COMPLETED'],
  },
  'tck-artifact-data': {
    state: S.TASK_STATE_COMPLETED,
    artifacts: [['data:{"key":"value","count":42}']],
    stream: ['artifact', 'COMPLETED'],
  },
  'tck-message-response': {
    state: S.TASK_STATE_COMPLETED,
    said: 'Direct message response',
    artifacts: [],
    stream: ['COMPLETED'],
  },
  'tck-input-required': { state: S.TASK_STATE_INPUT_REQUIRED, artifacts: [], stream: ['INPUT_REQUIRED'] },
  'tck-reject-task': { state: S.TASK_STATE_REJECTED, said: 'rejected', artifacts: [], stream: ['REJECTED'] },
  'tck-stream-001': lifecycle('Stream hello from TCK'),
  'tck-stream-002': { state: S.TASK_STATE_COMPLETED, artifacts: [], stream: ['COMPLETED'] },
  'tck-stream-003': lifecycle('Stream task lifecycle'),
  'tck-stream-ordering-001': lifecycle('Ordered output'),
  'tck-stream-artifact-text': lifecycle('Streamed text content'),
  'tck-stream-artifact-file': {
    state: S.TASK_STATE_COMPLETED,
    artifacts: [[`raw:tck ${FILE}`]],
    stream: ['WORKING', 'artifact', 'COMPLETED'],
  },
  'tck-stream-artifact-chunked': {
    state: S.TASK_STATE_COMPLETED,
    artifacts: [['text:chunk-1 ', 'text:chunk-2']],
    stream: ['WORKING', 'artifact', 'artifact+append', 'COMPLETED'],
  },
  'test-resubscribe-message-id': { state: S.TASK_STATE_COMPLETED, artifacts: [], stream: ['WORKING', 'COMPLETED'] },
};

function lifecycle(text: string) {
  return { state: S.TASK_STATE_COMPLETED, artifacts: [[`text:${text}`]], stream: ['WORKING', 'artifact', 'COMPLETED'] };
}

function describePart(part: Part): string {
  const file = part.filename ? ` ${part.filename} ${part.mediaType}` : '';
  switch (part.content?.$case) {
    case 'text':
      return `text:${part.content.value}`;
    case 'raw':
      return `raw:${Buffer.from(part.content.value).toString('utf8')}${file}`;
    case 'url':
      return `url:${part.content.value}${file}`;
    case 'data':
      return `data:${JSON.stringify(part.content.value)}`;
    default:
      return 'none';
  }
}

const artifactsOf = (artifacts: Artifact[]) => artifacts.map((artifact) => artifact.parts.map(describePart));
const saidIn = (message: Message | undefined) =>
  message?.parts.map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');

/** A stream event in the scenarios' words: a state, or an artifact (`+append` on a chunk appended to one). */
function describeEvent(event: StreamResponse): string {
  const payload = event.payload;
  if (payload?.$case === 'statusUpdate') return TaskState[payload.value.status!.state].replace('TASK_STATE_', '');
  if (payload?.$case === 'artifactUpdate') return payload.value.append ? 'artifact+append' : 'artifact';
  return payload?.$case ?? 'none';
}

/** A message of the scenario `prefix`, as the TCK sends it (its id names the scenario). */
function message(prefix: string, ids: { taskId?: string } = {}): Message {
  return userMessage('TCK scenario', { messageId: idFor(prefix), ...ids });
}

/** The long-running scenario works until the test lets it finish. */
const running = new Map<string, () => void>();
const started: ((taskId: string) => void)[] = [];
const agent = createTckAgent({
  longRun: (taskId) =>
    new Promise<void>((resolve) => {
      running.set(taskId, resolve);
      started.splice(0).forEach((tell) => tell(taskId));
    }),
});

let h: TestHarness;
let receiver: Receiver;
before(async () => {
  receiver = await startReceiver();
  h = await startTestHarness({ harness: { agent }, config: TCK_CONFIG });
});
after(async () => {
  await h.close();
  await receiver.close();
});

describe('issue 37: the TCK scenario agent (examples/tck-agent.mjs) on the harness', () => {
  it('issue 37 (TCK HTTP_JSON-SVC-001, HTTP_JSON-ERR-001): HTTP+JSON answers and errors are application/json (A2A 1.0 §11.1, §11.6)', async () => {
    const base = `${h.harness.url}/a2a/rest`;
    const headers = { 'A2A-Version': '1.0', 'Content-Type': 'application/json' };
    const sent = await fetch(`${base}/message:send`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        message: { messageId: idFor('tck-complete-task'), role: 'ROLE_USER', parts: [{ text: 'x' }] },
      }),
    });
    assert.equal(sent.status, 200);
    assert.match(sent.headers.get('content-type')!, /^application\/json/);
    await sent.arrayBuffer();
    const missing = await fetch(`${base}/tasks/no-such-task`, { headers });
    assert.equal(missing.status, 404);
    assert.match(missing.headers.get('content-type')!, /^application\/json/);
    const { error } = await missing.json();
    assert.equal(error.details[0]['@type'], 'type.googleapis.com/google.rpc.ErrorInfo');
  });

  it('issue 37: covers every scenario these tests expect, and no other', () => {
    assert.deepEqual(SCENARIOS.map((s) => s.prefix).sort(), Object.keys(EXPECTED).sort());
  });

  for (const transport of TRANSPORTS) {
    it(`issue 37: each scenario's end state and artifacts, blocking, on ${transport}`, async () => {
      const client = await h.client(transport);
      for (const [prefix, expected] of Object.entries(EXPECTED)) {
        if (prefix === 'test-resubscribe-message-id') continue;
        const result = await client.sendMessage({
          tenant: '',
          message: message(prefix),
          configuration: undefined,
          metadata: {},
        });
        if (prefix === 'tck-message-response') {
          // A2A's message response (the TCK's DM-MSG-001): the Message itself, its task kept.
          assert.ok(!('status' in result), `${prefix}: a message`);
          assert.equal(saidIn(result as Message), expected.said, prefix);
          const kept = await client.getTask({ tenant: '', id: (result as Message).taskId, historyLength: undefined });
          assert.equal(kept.status?.state, expected.state, `${prefix} as stored`);
          continue;
        }
        assert.ok('status' in result, `${prefix}: a task`);
        const task = result as Task;
        assert.equal(task.status?.state, expected.state, `${prefix} on ${transport}`);
        if (expected.said) assert.equal(saidIn(task.status?.message), expected.said, prefix);
        assert.deepEqual(artifactsOf(task.artifacts), expected.artifacts, `${prefix} on ${transport}`);
        const stored = await client.getTask({ tenant: '', id: task.id, historyLength: undefined });
        assert.deepEqual(artifactsOf(stored.artifacts), expected.artifacts, `${prefix} as stored`);
      }
      // An id no scenario names (the TCK's `tck-send-001`) completes the task, naming the id.
      const other = message('tck-send-001');
      const result = await client.sendMessage({ tenant: '', message: other, configuration: undefined, metadata: {} });
      assert.equal((result as Task).status?.state, S.TASK_STATE_COMPLETED, transport);
      assert.equal(saidIn((result as Task).status?.message), `Unhandled messageId prefix: ${other.messageId}`);
    });

    it(`issue 37: each scenario's stream events in order, on ${transport}`, async () => {
      const client = await h.client(transport);
      for (const [prefix, expected] of Object.entries(EXPECTED)) {
        if (prefix === 'test-resubscribe-message-id') continue;
        const events = await collect(
          client.sendMessageStream({ tenant: '', message: message(prefix), configuration: undefined, metadata: {} }),
        );
        assert.equal(events[0]?.payload?.$case, 'task', `${prefix}: the stream opens with the task`);
        assert.deepEqual(events.slice(1).map(describeEvent), expected.stream, `${prefix} on ${transport}`);
        const taskId = (events[0]!.payload!.value as Task).id;
        const stored = await client.getTask({ tenant: '', id: taskId, historyLength: undefined });
        assert.equal(stored.status?.state, expected.state, prefix);
        assert.deepEqual(artifactsOf(stored.artifacts), expected.artifacts, `${prefix} as stored`);
      }
    });

    it(`issue 37: a long-running task (test-resubscribe-message-id) is resubscribed to and completes, on ${transport}`, async () => {
      const client = await h.client(transport);
      const working = new Promise<string>((resolve) => started.push(resolve));
      const stream = client.sendMessageStream({
        tenant: '',
        message: message('test-resubscribe-message-id'),
        configuration: undefined,
        metadata: {},
      });
      const first = await stream.next();
      const taskId = (first.value as StreamResponse).payload!.value as Task;
      assert.equal(await working, taskId.id);
      const resubscribed = client.resubscribeTask({ tenant: '', id: taskId.id });
      const opened = await resubscribed.next();
      assert.equal((opened.value as StreamResponse).payload?.$case, 'task', 'a subscription opens with the task');
      running.get(taskId.id)!();
      const rest = await collect(resubscribed);
      assert.deepEqual(rest.map(describeEvent), ['COMPLETED'], transport);
      const original = await collect(stream);
      assert.deepEqual(original.map(describeEvent), EXPECTED['test-resubscribe-message-id']!.stream, transport);
    });

    it(`issue 37 / CMD-34: with messageIdRetentionMs 0, the TCK's prerequisite sent again, id and text alike, makes a new task, on ${transport}`, async () => {
      const client = await h.client(transport);
      const prerequisite = userMessage('TCK prerequisite task creation', {
        messageId: `tck-input-required-${SESSION}-${transport}`,
      });
      const send = async () =>
        (await client.sendMessage({
          tenant: '',
          message: prerequisite,
          configuration: undefined,
          metadata: {},
        })) as Task;
      const first = await send();
      await client.cancelTask({ tenant: '', id: first.id, metadata: {} });
      const second = await send();
      assert.notEqual(second.id, first.id);
      assert.equal(second.status?.state, S.TASK_STATE_INPUT_REQUIRED);
    });

    it(`issue 37: a push config on a task that tck-complete-task completes is delivered to a loopback receiver, on ${transport}`, async () => {
      const client = await h.client(transport);
      const pushConfig = {
        tenant: '',
        id: `tck-push-${SESSION}`,
        taskId: '',
        url: receiver.url,
        token: '',
        authentication: { scheme: 'Bearer', credentials: `tck-test-token-${SESSION}` },
      };
      // As the TCK does: an INPUT_REQUIRED task with the config given inline, then a message that completes it.
      const opened = (await client.sendMessage({
        tenant: '',
        message: message('tck-input-required'),
        configuration: { acceptedOutputModes: [], taskPushNotificationConfig: pushConfig, returnImmediately: false },
        metadata: {},
      })) as Task;
      assert.equal(opened.status?.state, S.TASK_STATE_INPUT_REQUIRED);
      const done = (await client.sendMessage({
        tenant: '',
        message: message('tck-complete-task', { taskId: opened.id }),
        configuration: undefined,
        metadata: {},
      })) as Task;
      assert.equal(done.status?.state, S.TASK_STATE_COMPLETED, transport);
      const completed = await poll('the COMPLETED status delivered', () =>
        receiver.received.find(
          (x) =>
            x.kind === 'statusUpdate' &&
            x.body.statusUpdate.taskId === opened.id &&
            /COMPLETED/.test(String(x.body.statusUpdate.status?.state)),
        ),
      );
      assert.equal(completed.headers.authorization, `Bearer tck-test-token-${SESSION}`, 'the auth the config names');
    });
  }
});
