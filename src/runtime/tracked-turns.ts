import type { SendMessageRequest, StreamResponse } from '@a2a-js/sdk';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { DelegatingRequestHandler } from '../commands/index.js';
import type { TaskEngine } from './engine.js';

/**
 * Counts every turn's stream as work under way until it ends, so that a shutdown waits for a
 * turn's last event to be stored (the SDK stores a turn's events while its stream is read)
 * instead of guessing how long that takes. Every turn reaches the SDK as a stream: blocking
 * sends are run as streams in front (`BlockingSendAsStream`), sub-tasks send theirs as streams.
 */
export class TrackedTurns extends DelegatingRequestHandler {
  constructor(
    inner: A2ARequestHandler,
    private readonly engine: Pick<TaskEngine, 'trackStream'>,
  ) {
    super(inner);
  }

  override sendMessageStream(params: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    return this.engine.trackStream(this.inner.sendMessageStream(params, context), taskIdOf);
  }
}

function taskIdOf(item: StreamResponse): string | undefined {
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
