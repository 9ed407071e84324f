/**
 * The wire vocabulary: every name and shape that crosses the wire and that more than one side
 * must spell the same way. The server, the command-line clients and the web page all import
 * it from here, so none of them can drift from the others. It depends on the SDK's types,
 * the Commands extension's vocabulary and fastest-levenshtein only (the web page bundles it), never on Node.
 */
import { TaskState, type Message, type Part } from '@a2a-js/sdk';
import { closest, distance } from 'fastest-levenshtein';
import { splitCommandText, type ArgumentValue } from '@tiny-harness/commands-extension/wire';

/** The Commands extension's own vocabulary has one home, its package; re-exported here for the harness's sides. */
export {
  COMMANDS_EXTENSION_URI,
  COMMAND_ARGUMENTS_EXTENSION_URI,
  type ArgumentValue,
  type ArgumentValues,
  argumentValuesOf,
  COMMAND_KEY,
  REPLY_ERROR_KEY,
  commandReplyError,
  TASK_REF_KEY,
  COMMAND_NAME_PATTERN,
  splitCommandText,
  textPart,
  dataPart,
  isTerminal,
} from '@tiny-harness/commands-extension/wire';

/** Whether a task stored in this state has a turn running (or one cut short, which recovery ends). */
export function isInFlight(state: TaskState | undefined): boolean {
  return state === TaskState.TASK_STATE_SUBMITTED || state === TaskState.TASK_STATE_WORKING;
}

/**
 * Metadata key that marks an agent message the harness wrote itself, not a model (a failure
 * explained, a turn interrupted, calls waiting for approval); its value says which kind. The
 * model is never sent such a message, and clients show it apart from the model's reply.
 */
export const NOTICE_KEY = 'tiny-harness/notice';

/**
 * Metadata key on an agent message a model wrote: which model (`provider:model`) wrote it, so
 * that a client can show the task's model without asking.
 */
export const MODEL_KEY = 'tiny-harness/model';

/**
 * The notice kinds of a turn that ended without the model's reply: the model could not be
 * reached or answered with an error, the store failed, or the server stopped mid-turn.
 */
export const TURN_FAILURE_NOTICES: ReadonlySet<string> = new Set(['model-failure', 'store-failure', 'interrupted']);

/** The notice kind of the status message that ends a turn waiting for tool-call approval (CMD-33). */
export const AWAITING_APPROVAL_NOTICE = 'awaiting-approval';

/** The notice kind of a WORKING status message: the turn's model request failed and is tried again. */
export const RETRYING_NOTICE = 'retrying';

/**
 * The notice kind of a WORKING status message: the turn runs without the tools of some MCP
 * servers (still connecting, or unreachable). Its data part is `{missing: [{server, why, ...}]}`.
 */
export const TOOLS_MISSING_NOTICE = 'tools-missing';

/**
 * The notice kind of a WORKING status message: the conversation was compacted before the turn's
 * model request (its data part: the compaction point's `{charsBefore, charsAfter}`).
 */
export const COMPACTED_NOTICE = 'compacted';

/**
 * The notice kind of a WORKING status message: the conversation passed `compact.autoAt` of the
 * model's budget but could not be compacted (the summary request failed); the turn goes on
 * without it. Data: `{reason}`.
 */
export const COMPACTION_FAILED_NOTICE = 'compaction-failed';

/**
 * The notice kind of a WORKING status message: the conversation does not fit the model's budget
 * even compacted, so its oldest messages were left out of this turn (CMD-36). Data: `{cut}`.
 */
export const CONTEXT_CUT_NOTICE = 'context-cut';

/**
 * The notice kinds a turn sends while it goes on, in WORKING status updates: the harness's own
 * words, which clients show apart from the reply and which do not end the turn.
 */
export const TURN_PROGRESS_NOTICES: ReadonlySet<string> = new Set([
  RETRYING_NOTICE,
  TOOLS_MISSING_NOTICE,
  COMPACTED_NOTICE,
  CONTEXT_CUT_NOTICE,
  COMPACTION_FAILED_NOTICE,
]);

/**
 * A model named without its provider (`echo` for `builtin:echo`, as people and Claude Code's
 * command files name them) is the offered `provider:model` of that name when exactly one
 * provider offers it; otherwise the name stays as given.
 */
export function fullModelId(name: string, offered: readonly string[]): string {
  if (!name || name.includes(':')) return name;
  const matches = offered.filter((id) => id.slice(id.indexOf(':') + 1) === name);
  return matches.length === 1 ? matches[0]! : name;
}

/**
 * The values of an argument that match what was typed: by prefix, or, for `provider:model`
 * values, by the part after the colon (`echo` finds `builtin:echo`).
 */
export function matchingValues(values: readonly ArgumentValue[], typed: string): ArgumentValue[] {
  return values.filter(
    (v) =>
      v.value.startsWith(typed) || (v.value.includes(':') && v.value.slice(v.value.indexOf(':') + 1).startsWith(typed)),
  );
}

/** Where the harness serves JSON-RPC and HTTP+JSON, from its root (the card names both; the page posts to the first). */
export const JSONRPC_PATH = '/a2a/jsonrpc';
export const REST_PATH = '/a2a/rest';
/** Where the Prometheus metrics are served (docs/operations.md). */
export const METRICS_PATH = '/metrics';

/**
 * Task metadata key under which a task names its parent and its sub-tasks (CMD-30):
 * `{"parent": "<id>"}` on a sub-task, `{"children": ["<id>", ...]}` on a parent, both on a
 * sub-task that has sub-tasks of its own.
 */
export const SUBTASKS_KEY = 'tiny-harness/subtasks';

/**
 * Metadata key of the task's generation on every Task, status update and artifact update the
 * harness sends (a JSON number): the number of the event in the task's log, 1 for its creation
 * (A2A 1.1's draft gives these a `generation` field; the SDK's 1.0 types have none yet). A client
 * resumes a stream after the last it saw (`Last-Event-ID`, spec/stream-resume-extension-v1.md).
 */
export const GENERATION_KEY = 'tiny-harness/generation';

/** The A2A version (1.1's draft) whose tasks and events carry `generation` as a field, not only the metadata key (issue 36). */
export const GENERATIONS_VERSION = '1.1';

/**
 * Metadata key, on the Task that starts a resumed `SubscribeToTask`, of the generation the replay
 * that follows starts after (the client's `Last-Event-ID`): a client that kept what it saw skips
 * the Task. Absent when no replay follows (the log no longer held what was missed).
 */
export const RESUMED_AFTER_KEY = 'tiny-harness/resumed-after';

/** Metadata key (`true`) on a hosted agent's final status update when it answered with a Message: a blocking send gets that Message. */
export const MESSAGE_REPLY_KEY = 'tiny-harness/message-reply';

/** The parent a task's metadata names under {@link SUBTASKS_KEY}: set on sub-tasks only. */
export function subtaskParentOf(metadata: Record<string, unknown> | undefined): string | undefined {
  const links = metadata?.[SUBTASKS_KEY] as { parent?: unknown } | undefined;
  return typeof links?.parent === 'string' ? links.parent : undefined;
}

/** The sub-tasks a task's metadata names under {@link SUBTASKS_KEY}, in start order. */
export function subtaskChildrenOf(metadata: Record<string, unknown> | undefined): string[] {
  const links = metadata?.[SUBTASKS_KEY] as { children?: unknown } | undefined;
  return Array.isArray(links?.children) ? links.children.filter((id): id is string => typeof id === 'string') : [];
}

/** Metadata key of the note a parent receives when one of its sub-tasks ends, or a delegated one starts (`SubtaskNote`). */
export const SUBTASK_NOTE_KEY = 'tiny-harness/subtask-note';

/** The value of `SUBTASK_NOTE_KEY`: `state` as A2A's JSON names it; `agent`, the agent a delegation started it with. */
export interface SubtaskNote {
  id: string;
  state: string;
  agent?: string;
}

/** The sub-task note a message's metadata carries, if any. */
export function subtaskNoteOf(metadata: Record<string, unknown> | undefined): SubtaskNote | undefined {
  const note = metadata?.[SUBTASK_NOTE_KEY] as Partial<SubtaskNote> | undefined;
  if (typeof note?.id !== 'string' || typeof note.state !== 'string') return undefined;
  return { id: note.id, state: note.state, ...(typeof note.agent === 'string' ? { agent: note.agent } : {}) };
}

/** The text of a message's or an artifact's parts, data and files left out. */
export function textOf(parts: readonly Part[] | undefined): string {
  return (parts ?? []).map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');
}

/** A state as a person reads it: `TASK_STATE_INPUT_REQUIRED` → `input required`. */
export function stateName(state: TaskState | undefined): string {
  const name = state === undefined ? undefined : TaskState[state];
  return name && name !== 'UNRECOGNIZED'
    ? name
        .replace(/^TASK_STATE_/, '')
        .toLowerCase()
        .replace(/_/g, ' ')
    : 'unknown';
}

/** The tool-calls extension v1 (spec/tool-calls-extension-v1.md): how a task shows its tool calls. */
export const TOOL_CALLS_EXTENSION_URI = 'https://madarauchiha-314.github.io/tiny-harness/a2a/ext/tool-calls/v1';

/** The stream-resume extension (spec/stream-resume-extension-v1.md): generations, SSE ids, `Last-Event-ID`. */
export const STREAM_RESUME_EXTENSION_URI = 'https://madarauchiha-314.github.io/tiny-harness/a2a/ext/stream-resume/v1';

/**
 * Metadata key that marks an agent message reporting one tool call (TOOL-1); its value is the
 * call's id. The message holds one data part, a {@link ToolCallData}; each change of the call's
 * status is a new message, and the newest one for an id is the call's status.
 */
export const TOOL_CALL_KEY = 'tiny-harness/tool-call';

/** Where a tool call stands. Only `running` and `awaiting-approval` are not final. */
export type ToolCallStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'canceled' | 'awaiting-approval';

/** A tool call as a data part carries it. `output` is the result text (or why it failed), once it ended. */
export interface ToolCallData {
  /** The call's id, the same in every update of the call. */
  id: string;
  /** The name the model called, `<server>_<tool>` (see docs/tools.md, "Names"). */
  tool: string;
  /** The MCP server's name in the config. */
  server: string;
  input: unknown;
  status: ToolCallStatus;
  output?: string;
  /** When `output` was cut: the task's artifact holding the whole output (the tool-calls extension). */
  outputArtifactId?: string;
}

/** The name of the artifact holding a call's whole output when its report holds only the head (not the reply). */
export const TOOL_OUTPUT_ARTIFACT_NAME = 'tool-output';

const FINAL_TOOL_STATUSES: ReadonlySet<ToolCallStatus> = new Set(['succeeded', 'failed', 'canceled']);

/** True once a call can change no more. */
export function isFinalToolStatus(status: ToolCallStatus): boolean {
  return FINAL_TOOL_STATUSES.has(status);
}

/** The tool calls a message reports (a tool-call message, or a status message that closes calls). */
export function toolCallsOf(parts: readonly Part[] | undefined): ToolCallData[] {
  const calls: ToolCallData[] = [];
  for (const part of parts ?? []) {
    const value = part.content?.$case === 'data' ? (part.content.value as Record<string, unknown>) : undefined;
    if (value && typeof value.id === 'string' && typeof value.tool === 'string' && typeof value.status === 'string')
      calls.push(value as unknown as ToolCallData);
  }
  return calls;
}

/**
 * Task metadata key of a sub-task started by a command file with `allowed-tools` (TOOL-3): the
 * list, as the file gave it. The sub-task's turn is offered only the tools it allows.
 */
export const ALLOWED_TOOLS_KEY = 'tiny-harness/allowed-tools';

/**
 * Task metadata key of a sub-task started by a command file with `context: none`: the sub-task
 * is sent only its instruction, not its parent's conversation.
 */
export const SUBTASK_CONTEXT_KEY = 'tiny-harness/context';

/**
 * Metadata key on a user message a command wrote (CMD-38): a command file's or skill's prompt, run
 * inline as its turn's input, which clients show as the command's. Refused on a client's message.
 */
export const FROM_COMMAND_KEY = 'tiny-harness/from-command';

/** Its value: the command (`/review`), and the model and tools its file gives the turn (TOOL-3). */
export interface FromCommand {
  command: string;
  model?: string;
  allowedTools?: string[];
}

/** The command a message came from, if a command wrote it. */
export function fromCommandOf(message: Pick<Message, 'metadata'>): FromCommand | undefined {
  const value = message.metadata?.[FROM_COMMAND_KEY] as Partial<FromCommand> | undefined;
  return value && typeof value.command === 'string' ? (value as FromCommand) : undefined;
}

/** The built-in commands that answer tool calls waiting for approval (CMD-33); clients send them. */
export const APPROVE_COMMAND = 'approve';
export const DENY_COMMAND = 'deny';

/**
 * One answer to a waiting call, as an `/approve` or `/deny` reply records it in its data part,
 * `{"calls": [ToolCallAnswer, ...]}`: the task's history is where a resumed turn reads it.
 */
export interface ToolCallAnswer {
  id: string;
  tool: string;
  decision: 'approved' | 'denied';
  reason?: string;
}

/** The name closest to `typed` within two edits (the first in `names` order on a tie), if any: for "did you mean". */
export function closestName(typed: string, names: readonly string[]): string | undefined {
  if (names.length === 0) return undefined;
  const near = closest(typed, names as string[]);
  return distance(typed, near) <= 2 ? near : undefined;
}

/**
 * What a client asks before sending text shaped like a command whose name the card does not
 * list (CMD-3 sends it to the model as an ordinary message): undefined when it is a command,
 * or not shaped like one.
 */
export function unknownCommandQuestion(text: string, commands: readonly string[]): string | undefined {
  const split = splitCommandText(text);
  if (!split || commands.includes(split.name) || commands.length === 0) return undefined;
  const near = closestName(split.name, commands);
  return `/${split.name} is not a command${near ? ` (did you mean /${near}?)` : ''}.`;
}

/**
 * The while-busy extension v1 (spec/while-busy-extension-v1.md): what a message sent while a
 * turn runs on its task does, by its metadata.
 */
export const WHILE_BUSY_EXTENSION_URI = 'https://madarauchiha-314.github.io/tiny-harness/a2a/ext/while-busy/v1';

/** Message metadata key: what the message does when its task is busy (`WhileBusy`); unset is `reject`. */
export const WHILE_BUSY_KEY = 'tiny-harness/while-busy';

/**
 * What a message does when a turn runs on its task, or its queue is not empty: refused
 * (`turn_in_progress`), queued behind the turns before it, queued first with the running turn
 * stopped as `/stop` stops it, or that and the stopped turn rewound as `/rewind 1` would (`rollback`).
 */
export const WHILE_BUSY_VALUES = ['reject', 'enqueue', 'interrupt', 'rollback'] as const;
export type WhileBusy = (typeof WHILE_BUSY_VALUES)[number];

/**
 * Metadata key on the Task a queued message's stream begins with: `{ messageId, position }`,
 * position 1 being next (`QueuedNote`).
 */
export const QUEUED_KEY = 'tiny-harness/queued';

/** The value of `QUEUED_KEY`. */
export interface QueuedNote {
  messageId: string;
  position: number;
}

/**
 * The conversation extension (spec/conversation-extension-v1.md): how a compacted, rewound or
 * forked conversation looks on the wire.
 */
export const CONVERSATION_EXTENSION_URI = 'https://madarauchiha-314.github.io/tiny-harness/a2a/ext/conversation/v1';

/**
 * In an agent message's metadata: the message is a compaction point, its text the summary of
 * the conversation up to `upTo` (CMD-36). Later turns send the summary instead of what it covers.
 */
export const COMPACTION_KEY = 'tiny-harness/compaction';

export interface CompactionPoint {
  /** The id of the last message the summary covers. */
  upTo: string;
  /** The model that wrote the summary. */
  model: string;
  /** The characters of conversation the next turn would have sent before, and sends after. */
  charsBefore: number;
  charsAfter: number;
}

/**
 * In an agent message's metadata: the conversation was taken back (CMD-37). The messages named
 * in `hidden`, all before this mark, are left out of the model's history and `GetTask`'s, and
 * kept in the store.
 */
export const REWIND_KEY = 'tiny-harness/rewind';

export interface RewindMark {
  /** The id of the user message the conversation was taken back to (hidden with what followed it). */
  to: string;
  /** The ids of the messages hidden, in history order. */
  hidden: string[];
}

/** The compaction point a message is, if it is one. */
export function compactionOf(message: Pick<Message, 'metadata'>): CompactionPoint | undefined {
  const value = message.metadata?.[COMPACTION_KEY] as Partial<CompactionPoint> | undefined;
  return value && typeof value.upTo === 'string' ? (value as CompactionPoint) : undefined;
}

/** The rewind a message marks, if it marks one. */
export function rewindOf(message: Pick<Message, 'metadata'>): RewindMark | undefined {
  const value = message.metadata?.[REWIND_KEY] as Partial<RewindMark> | undefined;
  return value && typeof value.to === 'string' && Array.isArray(value.hidden) ? (value as RewindMark) : undefined;
}

/**
 * In a task's metadata: the task is a fork (CMD-37), a copy of the conversation of `taskId`,
 * all of it or up to just before its message `messageId`.
 */
export const FORKED_FROM_KEY = 'tiny-harness/forked-from';

export interface ForkedFrom {
  taskId: string;
  messageId?: string;
}
