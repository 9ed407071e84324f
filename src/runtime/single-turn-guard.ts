import type { SendMessageRequest, StreamResponse } from '@a2a-js/sdk';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { HarnessError } from '../errors.js';
import { DelegatingRequestHandler } from '../a2a/index.js';
import type { TaskEngine } from './engine.js';
import type { TurnLimit } from './turn-limit.js';

/**
 * Makes sure two turns never run at once on one task, on any instance, and no more than the
 * `limit` on this instance. The SDK has no per-task execution lock: a second message during a
 * turn would run the executor again on the same bus. This wrapper takes a place under the
 * limit, then reserves the task with the engine (its lease), or refuses the message, clearly,
 * before the SDK sees it (nothing stored yet); the place is held until the turn's stream has
 * stored its last event. Commands are answered by the commands wrapper in front of this one and
 * never get here. With `visible`, a message for a task the caller may not see is refused as not
 * found before the lease, so that another user's running turn neither shows through the
 * refusal nor is held up by a reservation.
 * Every send reaches it as a stream: `BlockingSendAsStream` sits in front, and the harness's
 * own turns are streams.
 */
export class SingleTurnGuard extends DelegatingRequestHandler {
  constructor(
    inner: A2ARequestHandler,
    private readonly engine: Pick<TaskEngine, 'reserve' | 'release'>,
    private readonly visible?: (taskId: string, context: ServerCallContext) => Promise<boolean>,
    private readonly limit?: Pick<TurnLimit, 'take'>,
  ) {
    super(inner);
  }

  override sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    if (!params.message?.taskId && !this.limit) return this.inner.sendMessageStream(params, context);
    return this.checkedStream(params, context);
  }

  private async *checkedStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    // Taken first, before any read or write: under load, a refusal must cost nothing.
    const place = this.limit?.take();
    try {
      await this.checkVisible(params, context);
      const taskId = await this.claim(params);
      yield* this.releasing(this.inner.sendMessageStream(params, context), taskId, context);
    } finally {
      // Last: the turn's stream (`TrackedTurns`, inside) has stored its last event by now.
      place?.release();
    }
  }

  private async checkVisible(params: SendMessageRequest, context: ServerCallContext): Promise<void> {
    const taskId = params.message?.taskId;
    if (taskId && this.visible && !(await this.visible(taskId, context)))
      throw new HarnessError('task_not_found', `Task not found: ${taskId}`);
  }

  /** Reserves the message's task for a turn, or refuses the message when one is running there. */
  private async claim(params: SendMessageRequest): Promise<string | undefined> {
    const taskId = params.message?.taskId;
    if (!taskId) return undefined; // a new task: nobody else can know its id yet
    if (!(await this.engine.reserve(taskId))) {
      throw new HarnessError(
        'turn_in_progress',
        `A reply is still being written on task ${taskId}. Send your message again once it has finished, or /stop it first. Commands work meanwhile.`,
      );
    }
    return taskId;
  }

  /** Drops the reservation when the stream ends, if the executor never began the turn. */
  private async *releasing(
    stream: AsyncGenerator<StreamResponse, void, undefined>,
    taskId: string | undefined,
    context: ServerCallContext,
  ) {
    try {
      yield* stream;
    } finally {
      if (taskId) await this.engine.release(taskId, context);
    }
  }
}
