import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import type { AgentExecutionEvent, ServerCallContext } from '@a2a-js/sdk/server';
import { clientGoneSignal } from '../../a2a/index.js';
import { markGeneration } from '../../a2a/index.js';
import { COMMAND_KEY, GENERATION_KEY, NOTICE_KEY } from '../../wire.js';
import { ELICITATION_NOTICE } from '../../elicitations.js';
import type { RunningTurn } from '../../engine-ports.js';
import type { LogSubscription, LoggedEvent } from '../../ports.js';

/**
 * A turn's stream, read from its task's log: from the turn's own task event (what was logged
 * before it, between the lease and the turn's first write, is not the turn's), every event of
 * the task in generation order, command replies included (CMD-8), to the turn's final status.
 * That status is sent once the turn has given its lease back, so that a client that answers at
 * once finds the task free. The stream ends when its client goes away; the turn goes on.
 */
export async function* turnStream(
  subscription: LogSubscription,
  turn: Pick<RunningTurn, 'taskId' | 'done'>,
  context: ServerCallContext,
): AsyncGenerator<StreamResponse, void, undefined> {
  const signal = clientGoneSignal(context);
  const stop = () => subscription.close();
  signal?.addEventListener('abort', stop, { once: true });
  let opened = false;
  try {
    for (;;) {
      const entry = await subscription.next();
      if (!entry) return;
      const { event } = entry;
      if (!opened && !(opened = event.kind === 'task')) continue;
      const item = asStreamResponse(entry);
      if (!item) continue;
      if (isFinalStatus(event)) {
        // A tool call's question to the user pauses the turn, which goes on once it is answered (issue 39).
        if (!isQuestionPause(event)) await turn.done;
        yield item;
        return;
      }
      yield item;
    }
  } finally {
    signal?.removeEventListener('abort', stop);
    subscription.close();
  }
}

/**
 * An event of the log as a stream sends it, carrying its generation in its metadata
 * (`GENERATION_KEY`): on a copy, for the log's events are shared by every reader here. A command
 * reply's metadata is exactly the extension's (CMD-4): its generation is only marked on it
 * (`generationOf`), for its SSE id.
 */
export function asStreamResponse({ event, generation }: LoggedEvent): StreamResponse | undefined {
  switch (event.kind) {
    case 'task':
      return { payload: { $case: 'task', value: withGeneration(event.data, generation) } };
    case 'statusUpdate':
      return {
        payload: {
          $case: 'statusUpdate',
          value: isCommandReply(event.data.metadata)
            ? markGeneration(event.data, generation)
            : withGeneration(event.data, generation),
        },
      };
    case 'artifactUpdate':
      return { payload: { $case: 'artifactUpdate', value: withGeneration(event.data, generation) } };
    case 'message':
      return undefined;
  }
}

function isCommandReply(metadata: Record<string, unknown> | undefined): boolean {
  return metadata?.[COMMAND_KEY] !== undefined;
}

/** `item` with the generation in its metadata. */
export function withGeneration<T extends { metadata?: Record<string, unknown> | undefined }>(
  item: T,
  generation: number,
): T {
  return { ...item, metadata: { ...item.metadata, [GENERATION_KEY]: generation } };
}

/** Whether the event pauses a running turn on a tool call's question to the user: the stream ends there, the turn does not. */
function isQuestionPause(event: AgentExecutionEvent): boolean {
  return event.kind === 'statusUpdate' && event.data.status?.message?.metadata?.[NOTICE_KEY] === ELICITATION_NOTICE;
}

/** States of a turn still under way; any other status is the one it ends with. */
const STILL_GOING: ReadonlySet<TaskState> = new Set([TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_SUBMITTED]);

/** Whether the event is a status that ends a turn (or leaves the task waiting, or ended). */
export function isFinalStatus(event: AgentExecutionEvent): boolean {
  return event.kind === 'statusUpdate' && event.data.status !== undefined && !STILL_GOING.has(event.data.status.state);
}
