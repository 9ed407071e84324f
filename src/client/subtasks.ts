/**
 * Following a sub-task that a command started (its reply's `task_ref`) to its end. The chat needs
 * only to know when it ends, not its reply's chunks: an agent that speaks A2A 1.1 is asked with
 * `GetTask` to answer once the sub-task moves on (`currentGeneration`, issue 36), again after
 * each answer, with no stream held open. Another agent's sub-task is subscribed to, and asked for
 * once the subscription is over (or could not start because the sub-task had ended already),
 * polling every second while it still runs.
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
  const waits = generationsInterface(card) !== undefined;
  if (!waits) await untilSubscriptionEnds(connection, id, signal);
  let failures = 0;
  let seen = 0;
  while (!signal.aborted) {
    try {
      const task = waits
        ? await getTaskPast(card, headers, id, seen, signal)
        : await client.getTask({ tenant: '', id, historyLength: 0 }, { signal });
      failures = 0;
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

/** A 1.0 agent's sub-task: its subscription, read until it ends, breaks or cannot start (ended already). */
async function untilSubscriptionEnds(
  { client }: Pick<Connection, 'client'>,
  id: string,
  signal: AbortSignal,
): Promise<void> {
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
}
