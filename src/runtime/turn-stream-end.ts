import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import type { AgentExecutionEvent, ExecutionEventBus, ServerCallContext } from '@a2a-js/sdk/server';
import type { TaskEngine } from './engine.js';
import { seqOf } from '../event-seq.js';

/**
 * The end of a turn's stream, with the replies stored before its final status (CMD-8).
 *
 * A command answered on another instance just as the turn ends is stored before the turn's
 * final status: its state was chosen under the task's row lock while the final status waited
 * for the turn's earlier events to be stored. It is read back here after the final status was
 * published on the bus, and the SDK's stream, which ends at that status, would never send it.
 * So the events handed on from the store (they carry a seq, `event-seq.ts`) that reach the bus
 * after the final status are kept, and when the SDK yields the final status, which it does
 * once that is stored, the task's events stored so far are read, and those stored before the
 * final status are sent first, in the order stored.
 */
export async function* withRepliesBeforeEnd(
  stream: AsyncGenerator<StreamResponse, void, undefined>,
  engine: Pick<TaskEngine, 'buses' | 'coordination'>,
  context: ServerCallContext,
): AsyncGenerator<StreamResponse, void, undefined> {
  let bus: ExecutionEventBus | undefined;
  let finalEvent: AgentExecutionEvent | undefined;
  const late: AgentExecutionEvent[] = [];
  const listen = (event: AgentExecutionEvent) => {
    if (!finalEvent && seqOf(event) === undefined && isFinalStatus(event)) finalEvent = event;
    else if (finalEvent && seqOf(event) !== undefined) late.push(event);
  };
  try {
    for await (const item of stream) {
      const taskId = taskIdOf(item);
      if (!bus && taskId) {
        bus = engine.buses.getByTaskId(taskId, context);
        bus?.on('event', listen);
      }
      if (taskId && finalEvent && isFinalItem(item)) {
        await engine.coordination.caughtUp(taskId);
        const finalSeq = seqOf(finalEvent) ?? Infinity;
        for (const event of late.sort((a, b) => seqOf(a)! - seqOf(b)!)) {
          if (seqOf(event)! < finalSeq && event.kind === 'statusUpdate')
            yield { payload: { $case: 'statusUpdate', value: event.data } };
        }
        late.length = 0;
      }
      yield item;
    }
  } finally {
    bus?.off('event', listen);
  }
}

/** States of a turn still under way; any other status is the one it ends with. */
const STILL_GOING: ReadonlySet<TaskState> = new Set([TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_SUBMITTED]);

function isFinalStatus(event: AgentExecutionEvent): boolean {
  return event.kind === 'statusUpdate' && event.data.status !== undefined && !STILL_GOING.has(event.data.status.state);
}

function isFinalItem(item: StreamResponse): boolean {
  return (
    item.payload?.$case === 'statusUpdate' &&
    item.payload.value.status !== undefined &&
    !STILL_GOING.has(item.payload.value.status.state)
  );
}

export function taskIdOf(item: StreamResponse): string | undefined {
  const payload = item.payload;
  switch (payload?.$case) {
    case 'task':
      return payload.value.id;
    case 'statusUpdate':
    case 'artifactUpdate':
      return payload.value.taskId;
    default:
      return undefined;
  }
}
