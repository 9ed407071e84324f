/**
 * Tool calls that wait for a person's approval (CMD-33), as the task's history keeps them, so
 * that any instance, after any restart, reads the same answer:
 * - a turn whose model asked for such calls ends in INPUT_REQUIRED with a *pause*: a status
 *   message (a notice the model is not shown) holding one data part per waiting call;
 * - `/approve` and `/deny` record their answers in their replies' data parts
 *   (`{calls: [{id, tool, decision, reason?}]}`); a reply is an agent message with the command's
 *   metadata, which no client can write;
 * - once every waiting call has an answer, the turn resumes with a *resume* message (a notice
 *   the model is not shown), or with the next ordinary message, which denies what is left.
 * Between the pause and the message that resumes the turn there are only command exchanges,
 * sub-task notes and resume notices: the pause is found by reading the history back from its end.
 */
import { randomUUID } from 'node:crypto';
import { Role, type Message, type Task } from '@a2a-js/sdk';
import type { TurnStarter } from '../engine-ports.js';
import { isCommandExchange, type ToolApprovalControl } from '../commands/index.js';
import {
  APPROVE_COMMAND,
  AWAITING_APPROVAL_NOTICE,
  COMMAND_KEY,
  DENY_COMMAND,
  NOTICE_KEY,
  SUBTASK_NOTE_KEY,
  textPart,
  toolCallsOf,
  type ToolCallAnswer,
  type ToolCallData,
} from '../wire.js';
import type { ApprovalDecision } from './tool-calls.js';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { contextKey } from './task-models.js';
import type { ToolGrants } from '../ports.js';

/** The notice kind of the message that resumes a turn once its waiting calls are answered. */
export const RESUME_NOTICE = 'resume';

/** A call that waits, with the answer it was given so far, if any. */
export interface WaitingCall {
  call: ToolCallData;
  decision?: ApprovalDecision;
}

/**
 * The calls of the task's newest pause and their answers, or undefined when the task's last
 * turn did not end waiting for approval (or its waiting calls were answered by a turn since).
 * `skipMessageId` is left out of the reading: the message that starts the turn reading it.
 */
export function waitingCalls(history: readonly Message[], skipMessageId?: string): WaitingCall[] | undefined {
  const decisions = new Map<string, ApprovalDecision>();
  for (let i = history.length - 1; i >= 0; i -= 1) {
    const message = history[i]!;
    if (message.messageId === skipMessageId) continue;
    if (isCommandExchange(message)) {
      for (const answer of recordedDecisions(message)) {
        if (!decisions.has(answer.id))
          decisions.set(answer.id, { approved: answer.decision === 'approved', reason: answer.reason });
      }
      continue;
    }
    const notice = message.metadata?.[NOTICE_KEY];
    if (notice === AWAITING_APPROVAL_NOTICE && message.role === Role.ROLE_AGENT) {
      return toolCallsOf(message.parts)
        .filter((call) => call.status === 'awaiting-approval')
        .map((call) => ({ call, decision: decisions.get(call.id) }));
    }
    if (notice === RESUME_NOTICE || message.metadata?.[SUBTASK_NOTE_KEY] !== undefined) continue;
    return undefined;
  }
  return undefined;
}

/** The calls of a task still waiting for an answer, in the order the model asked for them. */
export function unansweredCalls(task: Pick<Task, 'history'>): ToolCallData[] {
  return (waitingCalls(task.history) ?? []).filter((w) => w.decision === undefined).map((w) => w.call);
}

/** The answers an `/approve` or `/deny` reply recorded; none for any other message. */
function recordedDecisions(message: Message): ToolCallAnswer[] {
  const command = message.metadata?.[COMMAND_KEY];
  if (message.role !== Role.ROLE_AGENT || (command !== APPROVE_COMMAND && command !== DENY_COMMAND)) return [];
  const found: ToolCallAnswer[] = [];
  for (const part of message.parts) {
    const calls = part.content?.$case === 'data' ? (part.content.value as { calls?: unknown }).calls : undefined;
    if (!Array.isArray(calls)) continue;
    for (const entry of calls as Partial<ToolCallAnswer>[]) {
      if (typeof entry?.id === 'string' && (entry.decision === 'approved' || entry.decision === 'denied'))
        found.push(entry as ToolCallAnswer);
    }
  }
  return found;
}

/** The text of a pause: which calls wait, and how to answer them. */
export function pauseText(calls: readonly ToolCallData[]): string {
  const lines = calls.map((call) => `- ${call.tool} ${shortInput(call.input)} (id ${call.id})`);
  const how =
    calls.length === 1
      ? 'Answer with /approve, /approve always (this tool, for the rest of this conversation), or /deny with a reason if you like. A new message instead denies it and goes on with that message.'
      : 'Answer with /approve, /approve always or /deny (all of them), or /approve <id> and /deny <id> [reason] one by one. A new message instead denies them and goes on with that message.';
  return `The model wants to call ${calls.length === 1 ? 'a tool that needs' : 'tools that need'} your approval:\n${lines.join('\n')}\n${how}`;
}

/** The message that resumes a task's turn once its waiting calls are answered (a user message: A2A turns start with one). */
export function resumeMessage(task: Pick<Task, 'id' | 'contextId'>): Message {
  return {
    messageId: randomUUID(),
    taskId: task.id,
    contextId: task.contextId,
    role: Role.ROLE_USER,
    parts: [textPart('The tool calls waiting for approval were answered; the turn resumes.')],
    metadata: { [NOTICE_KEY]: RESUME_NOTICE },
    extensions: [],
    referenceTaskIds: [],
  };
}

const INPUT_PREVIEW_CHARS = 200;

function shortInput(input: unknown): string {
  const text = JSON.stringify(input ?? {});
  return text.length > INPUT_PREVIEW_CHARS ? `${text.slice(0, INPUT_PREVIEW_CHARS)}…` : text;
}

/**
 * `/approve` and `/deny` on the harness: waiting calls read from the task's history, and a
 * turn resumed by the engine (one turn per task, across instances), counted under the limit of
 * turns in flight but never refused by it: its answers are stored already.
 */
export function toolApprovalControl(engine: Pick<TurnStarter, 'startTurn'>, grants: ToolGrants): ToolApprovalControl {
  const scope = (task: Task, callContext: ServerCallContext) => contextKey(task.contextId, callContext);
  return {
    allowAlways: (task, tools, callContext) => grants.grant(scope(task, callContext), tools),
    allowed: (task, callContext) => grants.list(scope(task, callContext)),
    revoke: (task, tool, callContext) => grants.revoke(scope(task, callContext), tool),
    unanswered: (task) => unansweredCalls(task),
    resume: async function* (task, callContext) {
      const turn = await engine.startTurn(resumeMessage(task), callContext, { pastLimit: true });
      yield* turn.events;
    },
  };
}
