/**
 * Opening `tiny-harness chat`: connect to the agent, check that it takes the calls (a token it
 * asks for was given), then start the chat, in a task to resume when one is named: by id
 * (`--task`), the user's latest conversation (`--continue`), or one chosen from their recent
 * ones (`--resume`, src/recent-tasks.ts as the page lists them).
 */
import type { Task } from '@a2a-js/sdk';
import { listRecent, ownTasks } from '../recent-tasks.js';
import { runningReply } from '../stream-resume.js';
import { isInFlight, stateName } from '../wire.js';
import { accessProblem } from './access-check.js';
import { Chat } from './chat.js';
import { connect, describeClientError, type Connection, type Header } from './connect.js';
import type { TokenSource } from './token-source.js';
import { pickTask } from './task-picker.js';

export interface ChatOptions {
  url: string;
  headers: readonly Header[];
  /** The bearer token's source (`--token`, `--token-command`, `TINY_HARNESS_TOKEN`). */
  token?: TokenSource;
  /** `--card-key`: the JWKS URL or key file the card's signature must verify with. */
  cardKey?: string;
  /** A task to resume: its conversation is shown first, and the chat goes on in it. */
  taskId?: string;
  /** Resume the user's latest conversation, or one they choose from their recent ones. */
  pick?: 'latest' | 'choose';
}

/** How many messages of a resumed task are shown. */
const RESUME_SHOWN = 40;

/** How many recent conversations `--resume` offers. */
const OFFERED = 20;

/** The exit code of a chat that could not start as asked (`--resume` with no terminal to choose on). */
const USAGE = 2;

/** Runs the chat until the user leaves; returns the exit code. */
export async function runChat(options: ChatOptions): Promise<number> {
  let connection: Connection;
  let opening: Opening = { taskId: options.taskId };
  try {
    connection = await connect(options.url, options.headers, { tokens: options.token, cardKey: options.cardKey });
    const problem = await accessProblem(connection, options.headers, options.token !== undefined);
    if (problem) return fail(problem);
    if (options.pick) {
      const picked = await pick(connection, options.pick);
      if (typeof picked === 'number') return picked;
      opening = picked;
    }
  } catch (error) {
    return fail(describeClientError(error, options.url));
  }
  const chat = new Chat(connection, { input: process.stdin, output: process.stdout });
  if (opening.note) chat.note(opening.note);
  if (opening.taskId) {
    const read = await readTaskToResume(connection, opening.taskId);
    if (!read) return 1;
    chat.resume(read.task, read.replySoFar);
  }
  return chat.run();
}

/** How the chat opens: in the task to go on in, if any, after a line about it, if any. */
interface Opening {
  taskId?: string;
  note?: string;
}

/**
 * The task to go on in: the latest conversation, or the one chosen (none: a new one); an exit
 * code when the chat should not start (the list printed, for a pipe, to choose from).
 */
async function pick(connection: Connection, how: 'latest' | 'choose'): Promise<Opening | number> {
  const none = { note: `(no conversation to ${how === 'latest' ? 'continue' : 'resume'} yet: this one is new)` };
  if (how === 'latest') {
    const latest = (await ownTasks(connection.client, OFFERED, 0))[0];
    return latest ? { taskId: latest.id } : none;
  }
  const recent = await listRecent(connection.client, OFFERED);
  if (recent.length === 0) return none;
  const { stdin, stdout } = process;
  if (stdin.isTTY && stdout.isTTY) return { taskId: (await pickTask(stdin, stdout, recent))?.id };
  for (const task of recent) stdout.write(`${task.id}  ${stateName(task.state)}  ${task.title}\n`);
  process.stderr.write('error: --resume chooses on a terminal; to go on in one of these, give its id with --task\n');
  return USAGE;
}

function fail(problem: string): number {
  process.stderr.write(`error: ${problem}\n`);
  return 1;
}

/**
 * The task to resume with its last messages, and the reply so far of a turn running on it;
 * undefined (said why) when it cannot be read.
 */
export async function readTaskToResume(
  connection: Connection,
  taskId: string,
): Promise<{ task: Task; replySoFar?: string } | undefined> {
  const { client } = connection;
  try {
    const task = await client.getTask({ tenant: '', id: taskId, historyLength: RESUME_SHOWN });
    if (!isInFlight(task.status?.state)) return { task };
    // The running turn's reply is told from the others with the whole history (runningReply).
    const whole = await client.getTask({ tenant: '', id: taskId });
    const replySoFar = runningReply(whole)?.text;
    return { task: { ...whole, history: whole.history.slice(-RESUME_SHOWN) }, replySoFar };
  } catch (error) {
    process.stderr.write(`error: cannot resume task ${taskId}: ${describeClientError(error, connection.url)}\n`);
    return undefined;
  }
}
