import type { SendMessageRequest, StreamResponse } from '@a2a-js/sdk';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { DelegatingRequestHandler } from '../commands/index.js';
import type { TaskEngine } from './engine.js';
import { taskIdOf, withRepliesBeforeEnd } from './turn-stream-end.js';

/**
 * Counts every turn's stream as work under way until it ends, so that a shutdown waits for a
 * turn's last event to be stored (the SDK stores a turn's events while its stream is read)
 * instead of guessing how long that takes. Every turn reaches the SDK as a stream: blocking
 * sends are run as streams in front (`BlockingSendAsStream`), sub-tasks send theirs as streams.
 * A reply stored just before the turn's final status is sent before it (`turn-stream-end.ts`).
 */
export class TrackedTurns extends DelegatingRequestHandler {
  constructor(
    inner: A2ARequestHandler,
    private readonly engine: Pick<TaskEngine, 'trackStream' | 'buses' | 'coordination'>,
  ) {
    super(inner);
  }

  override sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    return this.engine.trackStream(
      withRepliesBeforeEnd(this.inner.sendMessageStream(params, context), this.engine, context),
      taskIdOf,
    );
  }
}
