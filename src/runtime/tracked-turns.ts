import { TaskState, type SendMessageRequest, type StreamResponse, type TaskStatusUpdateEvent } from '@a2a-js/sdk';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { DelegatingRequestHandler } from '../a2a/index.js';
import type { EndingTurn, TaskEngine } from './engine.js';
import { taskIdOf, withRepliesBeforeEnd } from './turn-stream-end.js';
import { isHarnessError } from '../errors.js';
import { TurnFenced, TurnUnwritten } from './turns.js';
import { untilDone } from './until-done.js';

type Engine = Pick<
  TaskEngine,
  'buses' | 'coordination' | 'track' | 'abortTurn' | 'turnOf' | 'forget' | 'settle' | 'isBusy' | 'stopping'
>;

/**
 * Counts every turn's stream as work under way until it ends, so that a shutdown waits for a
 * turn's last event to be stored (the SDK stores a turn's events while its stream is read)
 * instead of guessing how long that takes. Every turn reaches the SDK as a stream: blocking
 * sends are run as streams in front (`BlockingSendAsStream`), sub-tasks send theirs as streams.
 * A reply stored just before the turn's final status is sent before it (`turn-stream-end.ts`).
 *
 * A stream that fails, one of its events not stored (the database connection was lost), ends
 * with the turn's final status all the same, stored here (`endUnwritten`): a task is never left
 * in flight with no turn. Only when that cannot be stored either does the failure reach the caller.
 *
 * A turn whose write was refused because another instance took its task over (`turn_fenced`:
 * this instance stalled past its lease) stops there: its model request is aborted, nothing of it
 * is stored or handed on any more, not even a final status, and its stream ends with the refusal.
 */
export class TrackedTurns extends DelegatingRequestHandler {
  constructor(
    inner: A2ARequestHandler,
    private readonly engine: Engine,
    /** Told of each failed try to store a turn's end. */
    private readonly onError: (error: unknown, what: string, taskId: string) => void = () => undefined,
    /** Told once per turn fenced off its task. */
    private readonly onFenced: (taskId: string, epoch: number) => void = () => undefined,
  ) {
    super(inner);
  }

  override async *sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    // Counted from the first read: a stream nobody reads runs nothing.
    let done!: () => void;
    void this.engine.track(new Promise<void>((resolve) => (done = resolve)));
    let taskId: string | undefined;
    let turn: EndingTurn | undefined;
    let fenced = false;
    try {
      for await (const item of withRepliesBeforeEnd(
        this.inner.sendMessageStream(params, context),
        this.engine,
        context,
      )) {
        if (!taskId && (taskId = taskIdOf(item))) turn = this.engine.turnOf(taskId);
        yield item;
      }
    } catch (error) {
      if (turn && isHarnessError(error) && error.code === 'turn_fenced') {
        fenced = true;
        await this.stopFenced(turn);
        throw error;
      }
      const ended = turn && (await this.endUnwritten(turn, context));
      if (!ended) throw error;
      yield { payload: { $case: 'statusUpdate', value: ended } };
    } finally {
      // What the SDK published but did not store still reaches the other instances, unless fenced.
      if (taskId && !fenced) await this.engine.coordination.handOn(taskId);
      if (turn) this.engine.forget(turn);
      done();
    }
  }

  /** Stops a fenced turn, then forgets whatever it published that no write took. */
  private async stopFenced(turn: EndingTurn): Promise<void> {
    this.engine.abortTurn(turn.taskId, new TurnFenced(), turn);
    this.onFenced(turn.taskId, turn.epoch);
    await turn.ended;
    this.engine.coordination.discard(turn.taskId);
  }

  /**
   * Ends a turn whose stream failed: still running, it is stopped, and ends saying so; then its
   * final status is stored here, tried again until written, unless the task ended or a new turn
   * took it meanwhile. The events no save took go first, so that the other instances see what
   * the streams here saw, in order. Resolves with the task's final status as stored, or
   * undefined when the task did not end.
   */
  private async endUnwritten(turn: EndingTurn, context: ServerCallContext): Promise<TaskStatusUpdateEvent | undefined> {
    const { taskId } = turn;
    this.engine.abortTurn(taskId, new TurnUnwritten(), turn);
    const final = await turn.ended;
    await this.engine.coordination.handOn(taskId);
    if (!final?.status) return undefined;
    let stored: TaskStatusUpdateEvent | undefined;
    try {
      await untilDone(
        () =>
          this.engine.settle(taskId, context, async (task) => {
            stored = { taskId, contextId: task.contextId, status: task.status, metadata: {} };
            if (!inFlight(task.status?.state) || (await this.engine.isBusy(taskId))) return undefined;
            return (stored = final);
          }),
        {
          stop: () => this.engine.stopping,
          onError: (error) => this.onError(error, 'storing the end of a turn (trying again)', taskId),
        },
      );
    } catch (error) {
      this.onError(error, 'storing the end of a turn', taskId);
      return undefined;
    }
    return inFlight(stored?.status?.state) ? undefined : stored;
  }
}

function inFlight(state: TaskState | undefined): boolean {
  return state === TaskState.TASK_STATE_SUBMITTED || state === TaskState.TASK_STATE_WORKING;
}
