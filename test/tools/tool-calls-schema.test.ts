/**
 * TOOL-1: every shape the harness builds for the tool-calls extension is valid against its
 * JSON Schema, and the schema refuses what the specification does not allow.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CALL_LEFT_TEXT, closingParts, toolCallMessage } from '../../src/runtime/tool-calls.js';
import type { ToolCallAnswer, ToolCallData } from '../../src/wire.js';
import { assertValidToolCallParts, toolCallViolation, toolCallsViolation } from '../support/tool-calls-schema.js';

const base: ToolCallData = {
  id: 'c1',
  tool: 'fs_read_text_file',
  server: 'fs',
  input: { path: '/x' },
  status: 'running',
};

describe('the tool-calls extension schema (TOOL-1)', () => {
  it('TOOL-1: each report the harness builds is valid, for every status', () => {
    const shapes: ToolCallData[] = [
      base,
      { ...base, status: 'awaiting-approval' },
      { ...base, status: 'succeeded', output: 'text' },
      { ...base, status: 'failed', output: 'The tool reported an error.' },
      { ...base, status: 'canceled', output: CALL_LEFT_TEXT },
      { ...base, status: 'succeeded', output: 'head\n[output cut: ...]', outputArtifactId: 'tool-output-c1' },
    ];
    const messages = shapes.map((call) => toolCallMessage('t', 'c', call));
    assert.equal(assertValidToolCallParts(messages), shapes.length);
    const closing = {
      ...messages[0]!,
      metadata: {},
      parts: [...messages[0]!.parts.slice(0, 1), ...closingParts([base])],
    };
    assert.equal(assertValidToolCallParts([closing]), 1, 'the parts that close open calls are valid calls');
  });

  it('TOOL-1: the answers of /approve and /deny are valid', () => {
    const answers: ToolCallAnswer[] = [
      { id: 'c1', tool: 'fx_echo', decision: 'approved' },
      { id: 'c2', tool: 'fx_echo', decision: 'denied', reason: 'not now' },
    ];
    assert.equal(toolCallsViolation({ calls: answers }), undefined);
  });

  it('TOOL-1: the schema refuses extra keys, unknown statuses, and a final status without output', () => {
    assert.ok(toolCallViolation({ ...base, extra: 1 }));
    assert.ok(toolCallViolation({ ...base, status: 'done' }));
    assert.ok(toolCallViolation({ ...base, status: 'succeeded' }));
    assert.ok(
      toolCallViolation({ ...base, status: 'running', outputArtifactId: 'a' }),
      'a pointer comes with the summary',
    );
    assert.ok(toolCallsViolation({ calls: [{ id: 'c', tool: 't', decision: 'maybe' }] }));
  });
});
