/**
 * What the tests of tool calls that need approval (CMD-33) share: the fixture model's script
 * (the user's words choose the calls), the fixture MCP server with `echo` needing approval, and
 * reading a paused or resumed turn back.
 */
import assert from 'node:assert/strict';
import { TaskState, type Message, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { toolCallsOf, type ToolCallData } from '../../src/wire.js';
import { lastMessage, type ScriptedToolCall } from '../fixtures/model-server.js';
import { STDIO_FIXTURE } from '../fixtures/mcp-server.js';
import { assertValidToolCallParts } from '../support/tool-calls-schema.js';
import { collect, sendStream } from './support.js';
import { poll } from '../support/wait.js';

/** The user's words choose the calls; a tool result is answered with text quoting it. */
export function toolCalls(body: any): ScriptedToolCall[] | undefined {
  const last = lastMessage(body);
  if (last.role !== 'user') return undefined;
  if (last.content.includes('echo twice')) {
    return [
      { name: 'fx_echo', arguments: { text: 'one' } },
      { name: 'fx_echo', arguments: { text: 'two' } },
    ];
  }
  if (last.content.includes('echo and fail')) {
    return [
      { name: 'fx_fail', arguments: {} },
      { name: 'fx_echo', arguments: { text: 'after' } },
    ];
  }
  const echo = /please echo (\w+)/.exec(last.content);
  return echo ? [{ name: 'fx_echo', arguments: { text: echo[1] } }] : undefined;
}

export const reply = (body: any) => {
  const last = lastMessage(body);
  return last.role === 'tool'
    ? `tool said: ${last.content.slice(0, 200)}`
    : `plain answer to ${last.content.slice(0, 60)}`;
};

export const statusMessages = (events: StreamResponse[]): (Message | undefined)[] =>
  events.map((e) => (e.payload?.$case === 'statusUpdate' ? e.payload.value.status?.message : undefined));

/** The fixture MCP server over stdio, its `echo` needing approval. */
export const APPROVE_ECHO = { mcpServers: { fx: { ...STDIO_FIXTURE, cwd: process.cwd(), approve: ['echo'] } } };

/** The calls reported among `messages`, each checked against the tool-calls extension's schema. */
export const callsIn = (messages: (Message | undefined)[]): ToolCallData[] => {
  assertValidToolCallParts(messages);
  return messages.flatMap((m) => toolCallsOf(m?.parts));
};
export const finalOf = (events: StreamResponse[]) =>
  (events.at(-1)!.payload!.value as any).status as { state: TaskState; message: Message };

export interface Paused {
  events: StreamResponse[];
  final: { state: TaskState; message: Message };
  taskId: string;
  /** The calls the pause shows waiting. */
  waiting: ToolCallData[];
}

/** Sends a message whose model asks for calls that need approval; returns the paused turn's events. */
export async function pause(client: Client, text: string, taskId?: string): Promise<Paused> {
  const events = await collect(sendStream(client, text, { taskId }));
  const final = finalOf(events);
  assert.equal(final.state, TaskState.TASK_STATE_INPUT_REQUIRED, 'the turn waits for an answer');
  return {
    events,
    final,
    taskId: (events.at(-1)!.payload!.value as any).taskId as string,
    waiting: toolCallsOf(final.message.parts),
  };
}

/** The task once the turn that `answer` resumed has ended: its final status follows the reply. */
export async function turnEnded(client: Client, taskId: string, answer: Task): Promise<Task> {
  const replyId = answer.status?.message?.messageId;
  return poll('the end of the resumed turn', async () => {
    const task = await client.getTask({ tenant: '', id: taskId, historyLength: undefined });
    const message = task.status?.message;
    const ended =
      task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED &&
      message?.messageId !== replyId &&
      message?.metadata?.command === undefined;
    return ended ? task : undefined;
  });
}
