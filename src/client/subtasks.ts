/**
 * Following a sub-task that a command started (its reply's `task_ref`) to its end: subscribe to
 * it, and ask for it once the subscription is over (or could not start because the sub-task had
 * ended already), polling while it still runs.
 */
import type { Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { isTerminal } from '../commands/index.js';

const POLL_MS = 1000;
const MAX_FAILURES = 3;

export type SubtaskEnd = { kind: 'ended'; task: Task } | { kind: 'lost'; error: unknown } | { kind: 'stopped' };

/** Resolves when the sub-task has ended, the agent stopped answering, or `signal` stopped the watch. */
export async function followSubtask(client: Client, id: string, signal: AbortSignal): Promise<SubtaskEnd> {
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
  let failures = 0;
  while (!signal.aborted) {
    try {
      const task = await client.getTask({ tenant: '', id, historyLength: 0 }, { signal });
      if (isTerminal(task.status?.state)) return { kind: 'ended', task };
    } catch (error) {
      if (signal.aborted) break;
      if (++failures >= MAX_FAILURES) return { kind: 'lost', error };
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS).unref());
  }
  return { kind: 'stopped' };
}
