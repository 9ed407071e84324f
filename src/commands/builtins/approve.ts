import {
  CommandUsageError,
  type CommandDefinition,
  type CommandInvocation,
  type CommandResult,
} from '@tiny-harness/commands-extension';
import { APPROVE_COMMAND, DENY_COMMAND, type ToolCallAnswer, type ToolCallData } from '../../wire.js';
import type { ToolApprovalControl } from './ports.js';

/**
 * `/approve [always] [call-id]`: lets the waiting call (or every waiting call) run, then resumes
 * the turn (CMD-33). With `always`, the caller's later calls to those tools in this conversation
 * run without asking, until `/permissions revoke` (TOOL-5); waiting calls to them are approved too.
 */
export function approveCommand(approvals: ToolApprovalControl): CommandDefinition {
  return {
    name: APPROVE_COMMAND,
    description:
      'Let a tool call waiting for approval run (all of them without an id), with always: that tool in this conversation from now on; the turn then resumes',
    argumentHint: '[always] [call-id]',
    // One answer per call, on any instance: of two sent at once, the second reads the first's reply.
    decidesUnderLock: true,
    handler: async (invocation) => {
      const waiting = approvals.unanswered(invocation.task);
      if (waiting.length === 0) return { text: NOTHING_WAITING };
      const words = invocation.args.split(/\s+/).filter(Boolean);
      const always = words[0] === ALWAYS;
      const ids = always ? words.slice(1) : words;
      if (ids.length > 1)
        throw new CommandUsageError(
          `/approve takes always and one call id, or none for every waiting call. ${waitingList(waiting)}`,
        );
      const chosen = choose(waiting, ids[0] ?? '');
      if (!always) return answer(approvals, invocation, waiting, chosen, 'approved');
      // Stored before the reply: the resumed turn reads it, and a later call of these tools must not ask.
      const tools = [...new Set(chosen.map((call) => call.tool))];
      await approvals.allowAlways(invocation.task, tools, invocation.callContext);
      const granted = waiting.filter((call) => tools.includes(call.tool));
      const result = answer(approvals, invocation, waiting, granted, 'approved');
      return {
        ...result,
        text: `${result.text} From now on ${tools.join(', ')} ${tools.length === 1 ? 'runs' : 'run'} without asking in this conversation (/permissions lists and revokes).`,
        data: { ...result.data, always: tools },
      };
    },
  };
}

const ALWAYS = 'always';

/** `/deny [call-id] [reason]`: refuses the waiting call (or every waiting call), telling the model why, then resumes the turn (CMD-33). */
export function denyCommand(approvals: ToolApprovalControl): CommandDefinition {
  return {
    name: DENY_COMMAND,
    description:
      'Refuse a tool call waiting for approval (all of them without an id), with a reason for the model; the turn then resumes',
    argumentHint: '[call-id] [reason]',
    decidesUnderLock: true, // as /approve
    handler: (invocation) => {
      const waiting = approvals.unanswered(invocation.task);
      if (waiting.length === 0) return { text: NOTHING_WAITING };
      const [first = '', ...rest] = invocation.args.split(/\s+/);
      // The first word is a call id when it names a waiting call or looks like one (a mistyped id must not deny every call).
      const namesCall = waiting.some((call) => call.id === first) || CALL_ID_SHAPE.test(first);
      const chosen = namesCall ? choose(waiting, first) : waiting;
      const reason = (namesCall ? rest.join(' ') : invocation.args).trim() || undefined;
      return answer(approvals, invocation, waiting, chosen, 'denied', reason);
    },
  };
}

const NOTHING_WAITING = 'No tool call is waiting for approval on this task.';

/** Call ids are UUIDs. */
const CALL_ID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function choose(waiting: ToolCallData[], id: string): ToolCallData[] {
  if (!id) return waiting;
  const call = waiting.find((c) => c.id === id);
  if (!call) throw new CommandUsageError(`No call ${id} is waiting for approval. ${waitingList(waiting)}`);
  return [call];
}

function waitingList(waiting: ToolCallData[]): string {
  return `Waiting: ${waiting.map((call) => `${call.tool} (id ${call.id})`).join(', ')}.`;
}

/**
 * The reply records the answers in its data part, where the resumed turn reads them (the
 * task's history is the one place every instance sees). The turn resumes once no call is left
 * without an answer.
 */
function answer(
  approvals: ToolApprovalControl,
  { task, callContext }: CommandInvocation,
  waiting: ToolCallData[],
  chosen: ToolCallData[],
  decision: ToolCallAnswer['decision'],
  reason?: string,
): CommandResult {
  const calls: ToolCallAnswer[] = chosen.map((call) => ({
    id: call.id,
    tool: call.tool,
    decision,
    ...(reason ? { reason } : {}),
  }));
  const left = waiting.filter((call) => !chosen.includes(call));
  const done = `${decision === 'approved' ? 'Approved' : 'Denied'} ${chosen.map((call) => call.tool).join(', ')}.`;
  if (left.length > 0)
    return { text: `${done} The turn resumes once every call has an answer. ${waitingList(left)}`, data: { calls } };
  return { text: `${done} The turn resumes.`, data: { calls }, followUp: () => approvals.resume(task, callContext) };
}
