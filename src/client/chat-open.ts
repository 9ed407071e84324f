/**
 * Opening `tiny-harness chat`: connect to the agent, check that it takes the calls (a token it
 * asks for was given), then start the chat, in a task to resume when one is named.
 */
import { accessProblem } from './access-check.js';
import { Chat } from './chat.js';
import { connect, describeClientError, type Connection, type Header } from './connect.js';

export interface ChatOptions {
  url: string;
  headers: readonly Header[];
  /** A task to resume: its conversation is shown first, and the chat goes on in it. */
  taskId?: string;
}

/** How many messages of a resumed task are shown. */
const RESUME_SHOWN = 40;

/** Runs the chat until the user leaves; returns the exit code. */
export async function runChat(options: ChatOptions): Promise<number> {
  let connection: Connection;
  try {
    connection = await connect(options.url, options.headers);
    const problem = await accessProblem(connection, options.headers);
    if (problem) {
      process.stderr.write(`error: ${problem}\n`);
      return 1;
    }
  } catch (error) {
    process.stderr.write(`error: ${describeClientError(error, options.url)}\n`);
    return 1;
  }
  const chat = new Chat(connection, { input: process.stdin, output: process.stdout });
  if (options.taskId !== undefined) {
    const task = await readTask(connection, options.taskId);
    if (!task) return 1;
    chat.resume(task);
  }
  return chat.run();
}

/** The task to resume with its last messages; undefined (said why) when it cannot be read. */
async function readTask(connection: Connection, taskId: string) {
  try {
    return await connection.client.getTask({ tenant: '', id: taskId, historyLength: RESUME_SHOWN });
  } catch (error) {
    process.stderr.write(`error: cannot resume task ${taskId}: ${describeClientError(error, connection.url)}\n`);
    return undefined;
  }
}
