/**
 * `tiny-harness send <url> <text>`: one message, for scripts. The reply text goes to standard
 * output (streamed as it arrives with `--stream`), diagnostics and the task id to standard
 * error; `--json` prints the A2A objects instead, one JSON object per line. With `wait`, the
 * sub-tasks a command started are followed to their end and their results printed too. The
 * exit code is 0 when it worked, 1 when the request failed or the task (or a sub-task waited
 * for) ended FAILED or REJECTED, and 3 when the turn ended without the model's reply (the
 * model failed, the server stopped mid-turn).
 */
import { SendMessageResponse, StreamResponse, Task, type SendMessageResult } from '@a2a-js/sdk';
import { connect, describeClientError, userMessage, type Connection, type Header } from './connect.js';
import { isFailure, resultText, stateName, TurnReader, type Shown } from './render.js';
import { turnEvents } from './resume.js';
import { followSubtask } from './subtasks.js';
import { toolCallLine, TURN_FAILURE_NOTICES } from '../wire.js';

export interface SendOptions {
  url: string;
  text: string;
  headers: readonly Header[];
  stream: boolean;
  json: boolean;
  taskId?: string;
  contextId?: string;
  /** Wait for the sub-tasks the message started, and print their results. */
  wait?: boolean;
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
    connection = await connect(options.url, options.headers);
  } catch (error) {
    err.write(`error: ${describeClientError(error, options.url)}\n`);
    return 1;
  }
  // A reader that stops early (`| head -1`) is not an error: the rest is dropped.
  out.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
  const reader = new TurnReader();
  const printer = replyPrinter(out, err);
  /** The sub-tasks that command replies say they started. */
  const subtasks: string[] = [];
  const request = {
    tenant: '',
    message: userMessage(options.text, { taskId: options.taskId, contextId: options.contextId }),
    configuration: undefined,
    metadata: {},
  };
  try {
    if (options.stream) {
      // A stream that breaks before the turn ends is resumed where it broke off (issue 24).
      const said = (line: string) => err.write(`${line}\n`);
      for await (const event of turnEvents(connection.client, request.message, undefined, said)) {
        if (options.json) out.write(`${JSON.stringify(StreamResponse.toJSON(event))}\n`);
        const shown = reader.read(event);
        subtasks.push(...startedIn(shown));
        if (!options.json) printer.show(shown);
      }
    } else {
      const result = await connection.client.sendMessage(request);
      if (options.json) out.write(`${JSON.stringify(SendMessageResponse.toJSON(responseOf(result)))}\n`);
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
    return 1;
  }
  if (reader.taskId) err.write(`task=${reader.taskId} context=${reader.contextId} state=${stateName(reader.state)}\n`);
  for (const ref of subtasks) err.write(`sub-task ${ref} started\n`);
  const subtasksFailed = options.wait ? await waitForSubtasks(connection, subtasks, options, out, err) : false;
  if (isFailure(reader.state) || subtasksFailed) return 1;
  return reader.endNotice !== undefined && TURN_FAILURE_NOTICES.has(reader.endNotice) ? NO_REPLY_EXIT : 0;
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
    const end = await followSubtask(connection.client, id, new AbortController().signal);
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
  return shown.flatMap((item) => (item.kind === 'command' && item.taskRef ? [item.taskRef] : []));
}

/** The exit code of a turn that ended without the model's reply (docs/clients.md, "send"). */
export const NO_REPLY_EXIT = 3;

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
