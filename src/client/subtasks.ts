/**
 * Following a sub-task that a command started (its reply's `task_ref`) to its end: subscribe to
 * it, and ask for it once the subscription is over (or could not start because the sub-task had
 * ended already), polling while it still runs. An agent that speaks A2A 1.1 is asked to answer
 * once the sub-task moves on (`currentGeneration`, issue 36) instead of every second.
 */
import type { Task } from '@a2a-js/sdk';
import { isTerminal } from '../commands/index.js';
import { GENERATION_KEY } from '../wire.js';
import type { Connection } from './connect.js';
import { generationsInterface, getTaskPast } from './generations-client.js';

const POLL_MS = 1000;
const MAX_FAILURES = 3;

export type SubtaskEnd = { kind: 'ended'; task: Task } | { kind: 'lost'; error: unknown } | { kind: 'stopped' };

/** Resolves when the sub-task has ended, the agent stopped answering, or `signal` stopped the watch. */
export async function followSubtask(
  connection: Pick<Connection, 'client' | 'card' | 'headers'>,
  id: string,
  signal: AbortSignal,
): Promise<SubtaskEnd> {
  const { client, card, headers } = connection;
  try {
    for await (const event of client.resubscribeTask({ tenant: '', id }, { signal })) {
      const payload = event.payload;
      const state =
        payload?.$case === 'task' || payload?.$case === 'statusUpdate' ? payload.value.status?.state : undefined;
      if (isTerminal(state)) break;
    }
  } catch {
    // Ended before the subscription, or the stream broke: ask below.
  }
  const waits = generationsInterface(card) !== undefined;
  let failures = 0;
  let seen = 0;
  while (!signal.aborted) {
    try {
      const task = waits
        ? await getTaskPast(card, headers, id, seen, signal)
        : await client.getTask({ tenant: '', id, historyLength: 0 }, { signal });
      if (isTerminal(task.status?.state)) return { kind: 'ended', task };
      const generation = task.metadata?.[GENERATION_KEY];
      // The agent waited, and the sub-task moved on: ask again at once. Otherwise, as a poll.
      const movedOn = waits && typeof generation === 'number' && generation > seen;
      if (typeof generation === 'number') seen = generation;
      if (movedOn) continue;
    } catch (error) {
      if (signal.aborted) break;
      if (++failures >= MAX_FAILURES) return { kind: 'lost', error };
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS).unref());
  }
  return { kind: 'stopped' };
}
