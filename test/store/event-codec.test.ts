import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role, TaskState } from '@a2a-js/sdk';
import type { AgentExecutionEvent } from '@a2a-js/sdk/server';
import { decodeAgentEvent, encodeAgentEvent } from '../../src/store/event-codec.js';
import { artifact, message, newTask, textPart } from './helpers.js';

/** The text an event of a task travels as between instances (`task_events.event_json`). */
describe('event codec', () => {
  it('every kind of event reads back as it was: enums, raw bytes and data parts included', () => {
    const task = newTask({ id: 't', state: TaskState.TASK_STATE_WORKING });
    const reply = message('t', task.contextId, Role.ROLE_AGENT, 'done');
    reply.parts.push({
      content: { $case: 'raw', value: Buffer.from([0, 1, 254, 255]) },
      mediaType: 'application/octet-stream',
      filename: 'b.bin',
      metadata: {},
    });
    reply.parts.push({
      content: { $case: 'data', value: { list: [1, 'two', true] } },
      mediaType: 'application/json',
      filename: '',
      metadata: { k: 'v' },
    });
    const events: AgentExecutionEvent[] = [
      { kind: 'task', data: task },
      { kind: 'message', data: reply },
      {
        kind: 'statusUpdate',
        data: {
          taskId: 't',
          contextId: task.contextId,
          status: { state: TaskState.TASK_STATE_COMPLETED, message: reply, timestamp: '2025-01-01T00:00:00.000Z' },
          metadata: {},
        },
      },
      {
        kind: 'artifactUpdate',
        data: {
          taskId: 't',
          contextId: task.contextId,
          artifact: artifact('a', [textPart('chunk')]),
          append: true,
          lastChunk: true,
          metadata: {},
        },
      },
    ];
    for (const event of events) {
      const json = encodeAgentEvent(event);
      assert.deepEqual(decodeAgentEvent(json), event, event.kind);
      assert.ok(!json.includes('"$case"'), 'stored as the protocol JSON of a stream response');
    }
  });

  it('a decoded event shares nothing with the one encoded', () => {
    const event: AgentExecutionEvent = { kind: 'message', data: message('t', 'c', Role.ROLE_AGENT, 'hi') };
    const decoded = decodeAgentEvent(encodeAgentEvent(event));
    assert.notEqual(decoded.data, event.data);
  });

  it('a row with no payload is refused, not taken for an event', () => {
    assert.throws(() => decodeAgentEvent('{}'), SyntaxError);
  });
});
