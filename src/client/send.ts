/**
 * `tiny-harness send <url> <text>`: one message, for scripts. The reply text goes to standard
 * output (streamed as it arrives with `--stream`), diagnostics and the task id to standard
 * error; `--json` prints the A2A objects instead, one JSON object per line. With `wait`, the
 * sub-tasks a command started are followed to their end and their results printed too. A command
 * is followed into the turn it starts (`/approve` resuming one, a command file running inline),
 * unless `followResumedTurn` is off, so the turn's reply is printed and its end gives the exit code. Tool calls are listed on standard
 * error, blocking or streamed. The exit codes are `SEND_EXIT`.
 */
import { SendMessageResponse, StreamResponse, Task, type Message, type SendMessageResult } from '@a2a-js/sdk';
import { connect, describeClientError, userMessage, type Connection, type Header } from './connect.js';
import type { TokenSource } from './token-source.js';
import { sendOnGeneration, TaskMovedOn } from './generations-client.js';
import { isFailure, resultText, stateName, toolCallLine, TurnReader, type Shown } from './render.js';
import { turnEvents } from './resume.js';
import { followSubtask } from './subtasks.js';
import { SEND_EXIT } from './exit-codes.js';
import {
  AWAITING_APPROVAL_NOTICE,
  commandReplyError,
  COMMAND_KEY,
  splitCommandText,
  TOOL_CALL_KEY,
  toolCallsOf,
  TURN_FAILURE_NOTICES,
} from '../wire.js';
import { FORK_COMMAND } from '../conversation-replies.js';
import { ELICITATION_NOTICE } from '../elicitations.js';

export interface SendOptions {
  url: string;
  text: string;
  headers: readonly Header[];
  /** The bearer token's source (`--token`, `--token-command`, `TINY_HARNESS_TOKEN`). */
  token?: TokenSource;
  /** `--card-key`: the JWKS URL or key file the card's signature must verify with. */
  cardKey?: string;
  stream: boolean;
  json: boolean;
  taskId?: string;
  contextId?: string;
  /** Wait for the sub-tasks the message started, and print their results. */
  wait?: boolean;
  /** After a command, follow the turn it starts and print its reply (default); off: the command's reply alone (`--no-wait`). */
  followResumedTurn?: boolean;
  /**
   * Send only if the task (`taskId`) is still at this generation: A2A 1.1's `ifGenerationMatch`
   * (`--if-generation`), a blocking send; exit code `moved` when it has moved on.
   */
  ifGeneration?: number;
  /** Where the reply goes (standard output) and where diagnostics go (standard error). */
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
}

/** Sends the message and returns the exit code. */
export async function runSend(options: SendOptions): Promise<number> {
  const out = options.stdout ?? process.stdout;
  const err = options.stderr ?? process.stderr;
  let connection: Connection;
  try {
    connection = await connect(options.url, options.headers, { tokens: options.token, cardKey: options.cardKey });
  } catch (error) {
    err.write(`error: ${describeClientError(error, options.url)}\n`);
    return SEND_EXIT.failed;
  }
  // A reader that stops early (`| head -1`) is not an error: the rest is dropped.
  out.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
  const reader = new TurnReader();
  const printer = replyPrinter(out, err);
  /** The sub-tasks that command replies say they started. */
  const subtasks: string[] = [];
  /** The command sent, if the text is one: a reply to it that says it failed sets the exit code. */
  const command = splitCommandText(options.text)?.name;
  let commandFailed = false;
  // A turn a command starts (`/approve` resuming one, a command file running inline) follows its
  // reply on a stream only: a blocking answer is the reply alone. A command that starts none ends the stream at its reply.
  const followsTurn = options.followResumedTurn !== false && command !== undefined;
  const readReply = (message: Message | undefined) => {
    if (command !== undefined && message?.metadata?.[COMMAND_KEY] === command && commandReplyError(message))
      commandFailed = true;
  };
  const request = {
    tenant: '',
    message: userMessage(options.text, { taskId: options.taskId, contextId: options.contextId }),
    // The turn's tool calls are read from the history a blocking answer carries; --json prints the answer as it asked.
    configuration: options.json
      ? undefined
      : {
          acceptedOutputModes: [],
          taskPushNotificationConfig: undefined,
          historyLength: TURN_HISTORY,
          returnImmediately: false,
        },
    metadata: {},
  };
  try {
    if ((options.stream || followsTurn) && options.ifGeneration === undefined) {
      // A stream that breaks before the turn ends is resumed where it broke off (issue 24).
      const said = (line: string) => err.write(`${line}\n`);
      let first = true;
      for await (const event of turnEvents(connection.client, request.message, undefined, said)) {
        if (options.json) out.write(`${JSON.stringify(StreamResponse.toJSON(event))}\n`);
        // A stream on a task that exists opens with the task as it stood: its status message is
        // an earlier reply (the last command's), not this message's, which follows as an update.
        if (first && options.taskId !== undefined && event.payload?.$case === 'task')
          reader.shownBefore(event.payload.value.status?.message);
        else if (event.payload?.$case === 'task' || event.payload?.$case === 'statusUpdate')
          readReply(event.payload.value.status?.message);
        first = false;
        const shown = reader.read(event);
        subtasks.push(...startedIn(shown));
        if (!options.json) printer.show(shown);
      }
    } else {
      const result =
        options.ifGeneration === undefined
          ? await connection.client.sendMessage(request)
          : await sendOnGeneration(connection.card, connection.headers, request, options.ifGeneration);
      if (options.json) out.write(`${JSON.stringify(SendMessageResponse.toJSON(responseOf(result)))}\n`);
      if ('status' in result) {
        readReply(result.status?.message);
        // The calls the turn made are in its history, after the message sent: listed as a stream lists them.
        if (!options.json) printer.show(toolCallsAfter(result, request.message.messageId));
      }
      const shown = reader.read(
        'status' in result
          ? { payload: { $case: 'task', value: result } }
          : { payload: { $case: 'message', value: result } },
      );
      subtasks.push(...startedIn(shown));
      if (!options.json) printer.show(shown);
    }
    const rest = reader.finish();
    if (!options.json) printer.show(rest);
    printer.end();
  } catch (error) {
    printer.end();
    err.write(`error: ${describeClientError(error, options.url)}\n`);
    if (reader.taskId) err.write(`task=${reader.taskId} context=${reader.contextId}\n`);
    return error instanceof TaskMovedOn ? SEND_EXIT.moved : SEND_EXIT.failed;
  }
  if (reader.taskId) err.write(`task=${reader.taskId} context=${reader.contextId} state=${stateName(reader.state)}\n`);
  for (const ref of subtasks) err.write(`sub-task ${ref} started\n`);
  const subtasksFailed = options.wait ? await waitForSubtasks(connection, subtasks, options, out, err) : false;
  if (isFailure(reader.state) || subtasksFailed) return SEND_EXIT.failed;
  if (reader.endNotice !== undefined && TURN_FAILURE_NOTICES.has(reader.endNotice)) return SEND_EXIT.noReply;
  // A call waiting for approval, or a tool's question (elicitation): the turn waits for the user.
  if (reader.endNotice === AWAITING_APPROVAL_NOTICE || reader.endNotice === ELICITATION_NOTICE)
    return SEND_EXIT.awaitingApproval;
  return commandFailed ? SEND_EXIT.commandFailed : SEND_EXIT.ok;
}

/**
 * The history a blocking send asks for: enough for a turn of a hundred tool calls (each a
 * report when it starts and when it ends), not the whole of a long conversation.
 */
const TURN_HISTORY = 200;

/** Each report of a tool call in the task's history after the message `sentId`, as `Shown` items. */
function toolCallsAfter(task: Task, sentId: string): Shown[] {
  const sent = task.history.findIndex((message) => message.messageId === sentId);
  if (sent === -1) return []; // a history cut short: the calls of earlier turns are not this one's
  return task.history
    .slice(sent + 1)
    .filter((message) => message.metadata?.[TOOL_CALL_KEY] !== undefined)
    .flatMap((message) => toolCallsOf(message.parts).map((call) => ({ kind: 'tool' as const, call })));
}

/**
 * Follows each sub-task to its end and prints its result (with `--json`, the sub-task itself);
 * how each ended goes to standard error. True when one failed, or could not be followed.
 */
async function waitForSubtasks(
  connection: Connection,
  ids: readonly string[],
  options: SendOptions,
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): Promise<boolean> {
  let failed = false;
  for (const id of ids) {
    err.write(`waiting for sub-task ${id}…\n`);
    const end = await followSubtask(connection, id, new AbortController().signal);
    if (end.kind !== 'ended') {
      err.write(
        `error: lost sub-task ${id}${end.kind === 'lost' ? `: ${describeClientError(end.error, options.url)}` : ''}\n`,
      );
      failed = true;
      continue;
    }
    const state = end.task.status?.state;
    if (options.json) out.write(`${JSON.stringify(Task.toJSON(end.task))}\n`);
    else {
      const text = resultText(end.task);
      if (text) out.write(text.endsWith('\n') ? text : `${text}\n`);
    }
    err.write(`sub-task ${id} ${stateName(state)}\n`);
    if (isFailure(state)) failed = true;
  }
  return failed;
}

function startedIn(shown: Shown[]): string[] {
  // A fork's task is the conversation's copy, not a sub-task to wait for.
  return shown.flatMap((item) =>
    item.kind === 'command' && item.taskRef && item.name !== FORK_COMMAND ? [item.taskRef] : [],
  );
}

function responseOf(result: SendMessageResult): SendMessageResponse {
  return 'status' in result
    ? { payload: { $case: 'task', value: result } }
    : { payload: { $case: 'message', value: result } };
}

/** Plain text on standard output: model output as it comes, command replies and the final reply each on their own lines. */
function replyPrinter(out: NodeJS.WritableStream, err: NodeJS.WritableStream) {
  let atLineStart = true;
  const write = (text: string) => {
    if (!text) return;
    out.write(text);
    atLineStart = text.endsWith('\n');
  };
  const line = (text: string) => {
    if (!atLineStart) write('\n');
    write(text.endsWith('\n') ? text : `${text}\n`);
  };
  return {
    show(shown: Shown[]) {
      for (const item of shown) {
        if (item.kind === 'text') write(item.text);
        else if (item.kind === 'command') {
          line(item.text);
        } else if (item.kind === 'tool') {
          // How each call ended, on standard error: standard output stays the reply.
          if (item.call.status !== 'running') err.write(`[tool] ${toolCallLine(item.call)}\n`);
        } else if (item.kind === 'notice' || item.kind === 'mark') {
          // The harness's words (a retry, tools missing), on standard error: standard output stays the reply.
          err.write(`[notice] ${item.text}\n`);
        } else if (item.kind === 'end') {
          if (item.text) line(item.text);
          if (isFailure(item.state)) err.write(`the task ended ${stateName(item.state)}\n`);
        }
        // Notes about sub-tasks that ended meanwhile are for the chat; a script asks for the sub-task itself.
      }
    },
    end() {
      if (!atLineStart) write('\n');
    },
  };
}
