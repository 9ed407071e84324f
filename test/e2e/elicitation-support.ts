/**
 * What the tests of tool calls that ask the user (MCP elicitation, issue 39) share: the fixture
 * model's script (the user's words choose the call), asking, and answering with a data part.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type StreamResponse } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { elicitationOf, type ElicitationAnswer, type ElicitationData } from '../../src/elicitations.js';
import { lastMessage, type ScriptedToolCall } from '../fixtures/model-server.js';
import { collect, sendStream } from './support.js';

/** "please ask on <server>" calls `<server>_ask`; "please sign in on <server>" its `sign_in`. */
export function toolCalls(body: any): ScriptedToolCall[] | undefined {
  const last = lastMessage(body);
  if (last.role !== 'user') return undefined;
  const ask = /please ask on (\w+)/.exec(last.content);
  if (ask) return [{ name: `${ask[1]}_ask`, arguments: {} }];
  const signIn = /please sign in on (\w+)/.exec(last.content);
  return signIn ? [{ name: `${signIn[1]}_sign_in`, arguments: {} }] : undefined;
}

export const reply = (body: any) => {
  const last = lastMessage(body);
  return last.role === 'tool' ? `tool said: ${last.content.slice(0, 300)}` : `plain answer to ${last.content}`;
};

export interface Asked {
  taskId: string;
  events: StreamResponse[];
  state: TaskState;
  message: Message;
  question: ElicitationData;
}

/** Sends `text`, whose call asks the user; the stream ends at the pause, which this returns. */
export async function ask(client: Client, text: string, taskId?: string): Promise<Asked> {
  const events = await collect(sendStream(client, text, { taskId }));
  const last = events.at(-1)!.payload!.value as any;
  const question = elicitationOf(last.status?.message);
  assert.ok(question, `the stream ends at the question, not at ${JSON.stringify(last.status?.message?.parts)}`);
  return { taskId: last.taskId, events, state: last.status.state, message: last.status.message, question };
}

/** A user message holding an answer's data part. */
export function answerMessage(taskId: string, answer: ElicitationAnswer): Message {
  return {
    messageId: randomUUID(),
    taskId,
    contextId: '',
    role: Role.ROLE_USER,
    parts: [
      { content: { $case: 'data', value: { ...answer } }, mediaType: 'application/json', filename: '', metadata: {} },
    ],
    metadata: {},
    extensions: [],
    referenceTaskIds: [],
  };
}

/** Answers and reads the resumed turn's stream to its end. */
export function answer(client: Client, taskId: string, given: ElicitationAnswer): Promise<StreamResponse[]> {
  return collect(
    client.sendMessageStream({
      tenant: '',
      message: answerMessage(taskId, given),
      configuration: undefined,
      metadata: {},
    }),
  );
}

/** The final status of a stream. */
export function endOf(events: StreamResponse[]): { state: TaskState; message: Message } {
  return (events.at(-1)!.payload!.value as any).status;
}
