import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AgentCard } from './a2a-card-schema.js';
import { JsonRpcResponse, restError } from './a2a-binding-schema.js';
import { answerViolations, StreamCheck } from './a2a-calls.js';
import { listTasksResponse, ListTasksResponse, SendMessageResponse, StreamResponse, violations } from './a2a-schema.js';

/**
 * The A2A 1.0 checks themselves, on known-good and known-bad samples written from a2a.proto
 * and the specification. Each bad sample must be reported, and at the field it breaks.
 */

const textPart = (text: string) => ({ text, mediaType: 'text/plain' });
const agentMessage = {
  messageId: 'm-2',
  contextId: 'c-1',
  taskId: 't-1',
  role: 'ROLE_AGENT',
  parts: [textPart('Where to?')],
};
const task = {
  id: 't-1',
  contextId: 'c-1',
  status: { state: 'TASK_STATE_INPUT_REQUIRED', message: agentMessage, timestamp: '2025-10-28T10:30:00.000Z' },
  artifacts: [{ artifactId: 'a-1', name: 'response', parts: [textPart('Hello')] }],
  history: [
    { messageId: 'm-1', contextId: 'c-1', taskId: 't-1', role: 'ROLE_USER', parts: [textPart('Book me a flight')] },
    agentMessage,
  ],
  metadata: { any: ['json'] },
};
const artifactUpdate = {
  taskId: 't-1',
  contextId: 'c-1',
  artifact: { artifactId: 'a-1', parts: [textPart(' world')] },
  append: true,
  lastChunk: true,
};
const statusUpdate = {
  taskId: 't-1',
  contextId: 'c-1',
  status: { state: 'TASK_STATE_COMPLETED' },
  metadata: { command: 'status' },
};

/** `sample` with the value at `path` replaced (`undefined` deletes it). */
function changed<T>(sample: T, path: (string | number)[], value: unknown): T {
  const copy = structuredClone(sample) as any;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key];
  if (value === undefined) delete node[path.at(-1)!];
  else node[path.at(-1)!] = value;
  return copy;
}

function assertReported(problems: string[], field: string): void {
  assert.ok(
    problems.some((problem) => problem.startsWith(`${field}:`)),
    `expected a problem at ${field}, got: ${problems.length ? problems.join(' | ') : 'none'}`,
  );
}

describe('the A2A 1.0 checks of the test clients', () => {
  it('accept well-formed answers and events, and the complete example of spec 6.1', () => {
    const example = {
      task: {
        id: 'task-uuid',
        contextId: 'context-uuid',
        status: { state: 'TASK_STATE_COMPLETED' },
        artifacts: [
          {
            artifactId: 'artifact-uuid',
            name: 'Weather Report',
            parts: [{ text: 'Today will be sunny with a high of 75°F' }],
          },
        ],
      },
    };
    assert.deepEqual(violations(SendMessageResponse, example, 'answer'), []);
    assert.deepEqual(violations(SendMessageResponse, { message: agentMessage }, 'answer'), []);
    for (const event of [{ task }, { statusUpdate }, { artifactUpdate }, { message: agentMessage }]) {
      assert.deepEqual(violations(StreamResponse, event, 'event'), []);
    }
    const parts = [
      { raw: 'aGVsbG8=', mediaType: 'application/octet-stream', filename: 'a.bin' },
      { url: 'https://example.com/a.png' },
      { data: null },
      { text: '' },
    ];
    assert.deepEqual(
      violations(StreamResponse, changed({ artifactUpdate }, ['artifactUpdate', 'artifact', 'parts'], parts), 'event'),
      [],
    );
    assert.deepEqual(
      violations(ListTasksResponse, { tasks: [], nextPageToken: '', pageSize: 50, totalSize: 0 }, 'list'),
      [],
    );
  });

  it('report an artifact with no parts, at the field, citing the proto', () => {
    const problems = violations(
      StreamResponse,
      changed({ artifactUpdate }, ['artifactUpdate', 'artifact', 'parts'], []),
      'event',
    );
    assertReported(problems, 'event.artifactUpdate.artifact.parts');
    assert.match(problems.join('\n'), /Artifact\.parts/);
    assertReported(
      violations(SendMessageResponse, changed({ task }, ['task', 'artifacts', 0, 'parts'], []), 'answer'),
      'answer.task.artifacts[0].parts',
    );
  });

  it('report a status with an unknown state, the unset state, or a state given as a number', () => {
    for (const state of ['TASK_STATE_DONE', 'TASK_STATE_UNSPECIFIED', 'completed', 3, undefined]) {
      const problems = violations(
        StreamResponse,
        changed({ statusUpdate }, ['statusUpdate', 'status', 'state'], state),
        'event',
      );
      assertReported(problems, 'event.statusUpdate.status.state');
    }
    assert.match(
      violations(
        StreamResponse,
        changed({ statusUpdate }, ['statusUpdate', 'status', 'state'], 'TASK_STATE_DONE'),
        'e',
      ).join(''),
      /"TASK_STATE_DONE" is not a value of enum TaskState/,
    );
  });

  it('report missing or empty REQUIRED fields of messages, tasks and events', () => {
    const cases: [unknown, string][] = [
      [changed({ task }, ['task', 'id'], ''), 'event.task.id'],
      [changed({ task }, ['task', 'status'], undefined), 'event.task.status'],
      [changed({ message: agentMessage }, ['message', 'messageId'], undefined), 'event.message.messageId'],
      [changed({ message: agentMessage }, ['message', 'role'], 'ROLE_UNSPECIFIED'), 'event.message.role'],
      [changed({ message: agentMessage }, ['message', 'parts'], []), 'event.message.parts'],
      [changed({ message: agentMessage }, ['message', 'contextId'], undefined), 'event.message.contextId'],
      [changed({ statusUpdate }, ['statusUpdate', 'contextId'], ''), 'event.statusUpdate.contextId'],
      [changed({ statusUpdate }, ['statusUpdate', 'taskId'], undefined), 'event.statusUpdate.taskId'],
      [changed({ artifactUpdate }, ['artifactUpdate', 'artifact'], undefined), 'event.artifactUpdate.artifact'],
      [
        changed({ artifactUpdate }, ['artifactUpdate', 'artifact', 'artifactId'], ''),
        'event.artifactUpdate.artifact.artifactId',
      ],
    ];
    for (const [sample, field] of cases) assertReported(violations(StreamResponse, sample, 'event'), field);
  });

  it('report a oneof holding two members or none, an unknown or snake_case field, and a timestamp with an offset', () => {
    assertReported(violations(StreamResponse, { task, statusUpdate }, 'event'), 'event');
    assertReported(violations(StreamResponse, {}, 'event'), 'event');
    assertReported(
      violations(
        StreamResponse,
        changed({ artifactUpdate }, ['artifactUpdate', 'artifact', 'parts'], [{ text: 'a', data: {} }]),
        'event',
      ),
      'event.artifactUpdate.artifact.parts[0]',
    );
    assertReported(
      violations(
        StreamResponse,
        changed({ artifactUpdate }, ['artifactUpdate', 'artifact', 'parts'], [{ mediaType: 'text/plain' }]),
        'event',
      ),
      'event.artifactUpdate.artifact.parts[0]',
    );
    assert.match(
      violations(StreamResponse, changed({ statusUpdate }, ['statusUpdate', 'final'], true), 'event').join(''),
      /event\.statusUpdate: final is not a field/,
    );
    assertReported(
      violations(StreamResponse, changed({ statusUpdate }, ['statusUpdate', 'context_id'], 'c-1'), 'event'),
      'event.statusUpdate',
    );
    assertReported(
      violations(
        StreamResponse,
        changed({ statusUpdate }, ['statusUpdate', 'status', 'timestamp'], '2025-10-28T11:30:00+01:00'),
        'event',
      ),
      'event.statusUpdate.status.timestamp',
    );
  });

  it('ListTasksResponse: every field present on JSON, where the binary form cannot carry an empty token or a zero', () => {
    assertReported(
      violations(ListTasksResponse, { tasks: [], pageSize: 50, totalSize: 0 }, 'list'),
      'list.nextPageToken',
    );
    assertReported(
      violations(ListTasksResponse, { nextPageToken: '', pageSize: 50, totalSize: 0 }, 'list'),
      'list.tasks',
    );
    assert.deepEqual(violations(listTasksResponse(false), { pageSize: 50 }, 'list'), []);
  });

  it('hold an answer to what its request asked: historyLength, and no artifacts in a list unless asked for', () => {
    assertReported(
      answerViolations({ method: 'GetTask', params: { historyLength: 1 } }, task, 'answer'),
      'answer.history',
    );
    assert.deepEqual(answerViolations({ method: 'GetTask', params: { historyLength: 2 } }, task, 'answer'), []);
    const list = { tasks: [task], nextPageToken: '', pageSize: 50, totalSize: 1 };
    assertReported(answerViolations({ method: 'ListTasks', params: {} }, list, 'answer'), 'answer.tasks[0].artifacts');
    assert.deepEqual(answerViolations({ method: 'ListTasks', params: { includeArtifacts: true } }, list, 'answer'), []);
  });

  it('hold a stream to its order: a Task first, no Message after it, appends only onto a sent artifact, nothing after lastChunk', () => {
    const good = new StreamCheck({ method: 'SendStreamingMessage', params: {} });
    const first = changed({ artifactUpdate }, ['artifactUpdate', 'append'], false);
    for (const event of [
      { task: changed(task, ['artifacts'], undefined) },
      { statusUpdate },
      changed(first, ['artifactUpdate', 'lastChunk'], false),
      { artifactUpdate },
      { statusUpdate },
    ]) {
      assert.deepEqual(good.event(event), []);
    }
    const messageOnly = new StreamCheck({ method: 'SendStreamingMessage', params: {} });
    assert.deepEqual(messageOnly.event({ message: agentMessage }), []);
    assertReported(messageOnly.event({ statusUpdate }), 'SendStreamingMessage event 2');
    assertReported(
      new StreamCheck({ method: 'SubscribeToTask', params: {} }).event({ statusUpdate }),
      'SubscribeToTask event 1',
    );
    const afterTask = new StreamCheck({ method: 'SendStreamingMessage', params: {} });
    afterTask.event({ task });
    assertReported(afterTask.event({ message: agentMessage }), 'SendStreamingMessage event 2');
    const appends = new StreamCheck({ method: 'SendStreamingMessage', params: {} });
    appends.event({ task: changed(task, ['artifacts'], undefined) });
    assertReported(appends.event({ artifactUpdate }), 'SendStreamingMessage event 2.artifactUpdate.append');
    assertReported(appends.event({ artifactUpdate }), 'SendStreamingMessage event 3.artifactUpdate');
  });

  it('check the JSON-RPC envelope, the ErrorInfo of an A2A error, and the HTTP+JSON error body', () => {
    const errorInfo = {
      '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
      reason: 'TASK_NOT_FOUND',
      domain: 'a2a-protocol.org',
    };
    assert.deepEqual(
      violations(
        JsonRpcResponse,
        { jsonrpc: '2.0', id: 1, error: { code: -32001, message: 'Task not found', data: [errorInfo] } },
        'rpc',
      ),
      [],
    );
    assertReported(
      violations(JsonRpcResponse, { jsonrpc: '2.0', id: 1, error: { code: -32001, message: 'Task not found' } }, 'rpc'),
      'rpc.error.data',
    );
    assertReported(
      violations(
        JsonRpcResponse,
        { jsonrpc: '2.0', id: 1, error: { code: -32002, message: 'x', data: [errorInfo] } },
        'rpc',
      ),
      'rpc.error.data',
    );
    assertReported(violations(JsonRpcResponse, { jsonrpc: '2.0', id: 1 }, 'rpc'), 'rpc');
    assert.deepEqual(
      violations(
        restError(404),
        { error: { code: 404, status: 'NOT_FOUND', message: 'Task not found', details: [errorInfo] } },
        'rest',
      ),
      [],
    );
    assertReported(
      violations(restError(404), { error: { code: 400, status: 'NOT_FOUND', message: 'x' } }, 'rest'),
      'rest.error.code',
    );
    assertReported(
      violations(restError(400), { error: { code: 400, message: 'The request body is not valid JSON.' } }, 'rest'),
      'rest.error.status',
    );
    assertReported(violations(restError(404), { message: 'Task not found' }, 'rest'), 'rest');
  });

  it('check the agent card: REQUIRED fields and lists, interfaces, skills, security schemes', () => {
    const card = {
      name: 'agent',
      description: 'An agent',
      supportedInterfaces: [
        { url: 'http://127.0.0.1:1/a2a/jsonrpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      ],
      version: '1.0.0',
      capabilities: { streaming: true, extensions: [{ uri: 'https://example.com/ext', required: false }] },
      securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } },
      securityRequirements: [{ schemes: { bearer: { list: [] } } }],
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [{ id: 'chat', name: 'Chat', description: 'Talks', tags: ['chat'] }],
    };
    assert.deepEqual(violations(AgentCard, card, 'card'), []);
    assertReported(violations(AgentCard, changed(card, ['skills'], []), 'card'), 'card.skills');
    assertReported(
      violations(AgentCard, changed(card, ['supportedInterfaces', 0, 'protocolVersion'], undefined), 'card'),
      'card.supportedInterfaces[0].protocolVersion',
    );
    assertReported(violations(AgentCard, changed(card, ['capabilities'], undefined), 'card'), 'card.capabilities');
    assertReported(
      violations(AgentCard, changed(card, ['securitySchemes', 'bearer'], {}), 'card'),
      'card.securitySchemes.bearer',
    );
  });
});
