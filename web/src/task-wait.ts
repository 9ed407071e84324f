/**
 * Waiting for a task to change, from the page. An agent whose card lists A2A 1.1 is asked with
 * `GetTask` and `currentGeneration` (issue 36): it answers once the task is past the generation
 * given (or at its bound, `longPollMs`), so a change is seen as it happens, not at the next poll.
 * The SDK's client speaks 1.0 and drops the field, so the call is JSON-RPC written here, with
 * `A2A-Version: 1.1`, beside the page (its CSP allows only its own origin). Each such call holds
 * one of the six connections a browser opens to a host, so only a few wait at once; the others,
 * and an agent without 1.1, are polled.
 */
import { A2A_VERSION_HEADER, Task, type AgentCard, type TaskState } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { GENERATIONS_VERSION, JSONRPC_PATH, isTerminal } from '../../src/wire.js';
import { pause } from './reachability.js';

/** A task as a 1.1 `GetTask` answers it, with its `generation` field. */
export interface TaskAt {
  task: Task;
  generation: number | undefined;
}

/** `GetTask` of task `id`, answered once its generation is past `after` (at once when undefined). */
export type WaitPast = (id: string, after: number | undefined, signal?: AbortSignal) => Promise<TaskAt>;

/** How many `GetTask` calls wait at once: the page's own calls keep the browser's other connections. */
export const MAX_WAITING = 2;

/**
 * The 1.1 `GetTask` of the harness beside `pageUrl`, through `fetchImpl` (the page's
 * `harnessFetch`); undefined when the card lists no JSON-RPC interface for 1.1.
 */
export function waitPastFor(card: AgentCard, pageUrl: string, fetchImpl: typeof fetch): WaitPast | undefined {
  const speaks = (card.supportedInterfaces ?? []).some(
    (entry) => entry.protocolBinding.toUpperCase() === 'JSONRPC' && entry.protocolVersion === GENERATIONS_VERSION,
  );
  if (!speaks) return undefined;
  // The card's address need not be the browser's: JSON-RPC is beside the page, as for the SDK's client.
  const url = new URL(JSONRPC_PATH.slice(1), new URL('./', pageUrl)).href;
  let calls = 0;
  return async (id, after, signal) => {
    // An int64 in ProtoJSON: a decimal string.
    const params = {
      tenant: '',
      id,
      historyLength: 0,
      ...(after === undefined ? {} : { currentGeneration: String(after) }),
    };
    const response = await fetchImpl(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [A2A_VERSION_HEADER]: GENERATIONS_VERSION },
      body: JSON.stringify({ jsonrpc: '2.0', id: `wait-${++calls}`, method: 'GetTask', params }),
      signal,
    });
    const body = (await response.json()) as { result?: Record<string, unknown>; error?: { message?: string } };
    if (body.error || !body.result)
      throw new Error(body.error?.message ?? 'The harness answered GetTask with no task.');
    const generation = Number(body.result.generation);
    return { task: Task.fromJSON(body.result), generation: Number.isSafeInteger(generation) ? generation : undefined };
  };
}

/** The number of 1.1 waits under way in this page. */
let waiting = 0;

/**
 * Follows sub-task `id` until it ends, reporting its state as it changes; ends when it does or
 * when `signal` aborts. With `waitPast`, each call waits for the sub-task to move on, and the next
 * is made at once after a change; without it (or when {@link MAX_WAITING} calls wait already),
 * GetTask is polled, every second at first, then less often.
 */
export async function watchSubtask(
  client: Client,
  waitPast: WaitPast | undefined,
  id: string,
  onState: (state: TaskState | undefined) => void,
  signal?: AbortSignal,
): Promise<void> {
  let last: TaskState | undefined;
  let seen: number | undefined;
  for (let delay = 1000; !signal?.aborted;) {
    const waits = waitPast !== undefined && seen !== undefined && waiting < MAX_WAITING;
    let answer: TaskAt;
    if (waitPast) {
      if (waits) waiting++;
      try {
        answer = await waitPast(id, waits ? seen : undefined, signal);
      } finally {
        if (waits) waiting--;
      }
    } else {
      answer = { task: await client.getTask({ tenant: '', id, historyLength: 0 }, { signal }), generation: undefined };
    }
    const state = answer.task.status?.state;
    if (state !== last) onState((last = state));
    if (isTerminal(state)) return;
    const before = seen;
    if (answer.generation !== undefined) seen = answer.generation;
    // First read, or the agent waited and the sub-task moved on: ask again, waiting, at once.
    const waitNext = seen !== undefined && waitPast !== undefined && waiting < MAX_WAITING;
    if (waitNext && (before === undefined || (waits && seen! > before))) continue;
    // Otherwise as a poll; a wait that timed out on the agent is asked again soon, a poll less often.
    await pause(waits ? 1000 : delay, signal);
    if (!waits) delay = Math.min(delay * 1.5, 10_000);
  }
}
