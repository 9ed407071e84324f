/**
 * After a turn failed, whether its task has ended meanwhile (canceled elsewhere, say): then the
 * chat leaves it, and its next message starts a new task.
 */
import type { Client } from '@a2a-js/sdk/client';
import { isTerminal } from '../commands/index.js';
import { stateName } from './render.js';

/** The line saying the task has ended, when it has; undefined when it goes on or the agent cannot say. */
export async function taskEndedNote(client: Client, taskId: string): Promise<string | undefined> {
  try {
    const task = await client.getTask(
      { tenant: '', id: taskId, historyLength: 0 },
      { signal: AbortSignal.timeout(5000) },
    );
    if (!isTerminal(task.status?.state)) return undefined;
    return `(task ${taskId} is ${stateName(task.status?.state)}; the next message starts a new task)`;
  } catch {
    return undefined; // the agent cannot say: keep the task and let the next message find out
  }
}
