import type { Message, StreamResponse, Task } from '@a2a-js/sdk';
import { resolveUserScope, ServerCallContext } from '@a2a-js/sdk/server';
import { clientGoneSignal } from '../../a2a/index.js';
import { hasErrorCode, HarnessError } from '../../errors.js';
import {
  isTerminal,
  QUEUED_KEY,
  WHILE_BUSY_KEY,
  WHILE_BUSY_VALUES,
  type QueuedNote,
  type WhileBusy,
} from '../../wire.js';
import type { StartedTurn, TurnOptions, TurnStarter } from '../../engine-ports.js';
import { rewindTo } from '../conversation-rewinds.js';
import { openableTask } from '../openable-task.js';
import { asStreamResponse, isFinalStatus, withGeneration } from './turn-stream.js';
import type { Added, LogSubscription, QueuedMessage, TaskSnapshot } from '../../ports.js';

/** The tasks' queues as the store keeps them (`store/task-queue.ts`). */
export interface QueueRecords {
  add(entry: QueuedMessage, options: { head: boolean; max: number }): Promise<Added>;
  position(taskId: string, messageId: string): Promise<number | undefined>;
  list(taskId: string): Promise<QueuedMessage[]>;
  size(taskId: string): Promise<number>;
  pop(taskId: string): Promise<QueuedMessage | undefined>;
  drop(taskId: string): Promise<number>;
  tasks(): Promise<string[]>;
}

export interface TurnQueueOptions {
  engine: Pick<TurnStarter, 'startTurn' | 'stop' | 'coordination'>;
  records: QueueRecords;
  /** The task as the caller sees it, with its generation. */
  view: { read(taskId: string, context: ServerCallContext): Promise<TaskSnapshot | undefined> };
  feeds: { follow(taskId: string): Promise<LogSubscription> };
  /** The most messages one task's queue holds (`queue.maxPerTask`). */
  maxPerTask: number;
  onError: (error: unknown, what: string, taskId?: string) => void;
}

/**
 * Messages sent while a turn runs on their task (spec/while-busy-extension-v1.md): refused, as
 * before, or kept in the task's queue (`store/task-queue.ts`) and run as normal turns, in order,
 * once the turns before them have ended, on whichever instance is free. No message is stranded
 * across instances: whoever queues one stores it, then tries the task's lease; whoever ends a
 * turn gives its lease back, then tries the same (`run`). The one holding the lease takes the
 * head off the queue and starts its turn through the engine, as the user who queued it.
 */
export class TurnQueue {
  /** Tasks whose queued turn this instance is starting: the lease it gives back on a failure is not a turn's end. */
  private readonly starting = new Set<string>();
  /** The runs under way, which `stop` waits for. */
  private readonly runs = new Set<Promise<void>>();
  private stopped = false;

  constructor(private readonly options: TurnQueueOptions) {
    // Another instance, draining, gave a task back with messages waiting: run them here.
    options.engine.coordination.onQueueOffered((taskId) => void this.run(taskId));
  }

  /**
   * A message's answer: its turn's stream when it runs at once (no turn on its task, an empty
   * queue), or the stream of its place in the queue (`queuedStream`) as its metadata asks.
   */
  async send(
    message: Message,
    context: ServerCallContext,
    turnOptions?: TurnOptions,
  ): Promise<AsyncGenerator<StreamResponse, void, undefined>> {
    const { engine } = this.options;
    const how = whileBusyOf(message);
    if (!message.taskId) return (await engine.startTurn(message, context, turnOptions)).events;
    try {
      // Busy while a turn runs or messages wait: the lease is not taken then, and asking costs nothing more.
      return (await engine.startTurn(message, context, { ...turnOptions, unlessQueued: true })).events;
    } catch (error) {
      // A message sent on a generation is never queued: it would run once the task had moved on.
      if (how === 'reject' || turnOptions?.ifGeneration !== undefined || !hasErrorCode(error, 'turn_in_progress'))
        throw error;
    }
    return this.enqueue(message, context, how, turnOptions);
  }

  /** A resend of a message still in its task's queue: the stream of its place; undefined once it left the queue. */
  async followQueued(
    taskId: string,
    messageId: string,
    context: ServerCallContext,
  ): Promise<AsyncGenerator<StreamResponse, void, undefined> | undefined> {
    const subscription = await this.options.feeds.follow(taskId);
    try {
      const position = await this.options.records.position(taskId, messageId);
      const snapshot = position === undefined ? undefined : await this.options.view.read(taskId, context);
      if (position === undefined || !snapshot) {
        subscription.close();
        return undefined;
      }
      return queuedStream(subscription, snapshot, { messageId, position }, context);
    } catch (error) {
      subscription.close();
      throw error;
    }
  }

  /**
   * Runs the head of the task's queue if the task is free: takes the lease, pops the head and
   * starts its turn. Called after a message is queued, after every turn here gives its lease
   * back (`queued`: whether messages wait, as the release saw it; undefined: look), after
   * recovery and at start-up. Once stopped (the instance drains), the task is offered to the
   * other instances instead, when messages wait. Never rejects.
   */
  run(taskId: string, queued?: boolean): Promise<void> {
    if (queued === false) return Promise.resolve();
    if (this.stopped) return this.offer(taskId, queued);
    if (this.starting.has(taskId)) return Promise.resolve();
    const run = this.runOnce(taskId, queued).finally(() => this.runs.delete(run));
    this.runs.add(run);
    return run;
  }

  /**
   * Starts no queued turn more, and resolves once the runs under way are over (the instance
   * drains: the queues wait in the store, and each task given back is offered to the others).
   */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.runs);
  }

  /** A task of this instance, draining, whose queue holds messages: offered to the other instances. */
  private async offer(taskId: string, queued?: boolean): Promise<void> {
    const { records, engine, onError } = this.options;
    try {
      if (queued ?? (await records.size(taskId)) > 0) await engine.coordination.offerQueue(taskId);
    } catch (error) {
      onError(error, "offering a task's queued messages to the other instances", taskId);
    }
  }

  private async runOnce(taskId: string, queued?: boolean): Promise<void> {
    const { engine, records, onError } = this.options;
    try {
      for (let known = queued; ; known = undefined) {
        if (!(known ?? (await records.size(taskId)) > 0)) return;
        const epoch = await engine.coordination.acquireTurn(taskId);
        // The holder's turn runs the queue when it gives the lease back.
        if (epoch === undefined) return;
        this.starting.add(taskId);
        try {
          const head = await records.pop(taskId).catch(async (error: unknown) => {
            await engine.coordination.releaseTurn(taskId);
            throw error;
          });
          // Emptied meanwhile: given back, and looked at again, for one queued while the lease was held.
          if (!head) {
            await engine.coordination.releaseTurn(taskId);
            continue;
          }
          await this.startQueued(head, epoch);
          return;
        } finally {
          this.starting.delete(taskId);
        }
      }
    } catch (error) {
      onError(error, "running a task's queued message", taskId);
    }
  }

  /** Start-up: the queues of every task with messages waiting (their instance may have stopped). */
  async runAll(): Promise<void> {
    for (const taskId of await this.options.records.tasks()) await this.run(taskId);
  }

  /** The task's waiting messages, the head first (`/status`). */
  list(taskId: string): Promise<QueuedMessage[]> {
    return this.options.records.list(taskId);
  }

  /** Drops the task's queue: it has ended (`CancelTask`). Its waiting streams end on the task's final status. */
  async drop(taskId: string): Promise<void> {
    await this.options.records.drop(taskId);
  }

  private async enqueue(
    message: Message,
    context: ServerCallContext,
    how: Exclude<WhileBusy, 'reject'>,
    turnOptions: TurnOptions | undefined,
  ): Promise<AsyncGenerator<StreamResponse, void, undefined>> {
    const { records, feeds, maxPerTask, engine } = this.options;
    const taskId = message.taskId;
    // Before anything is stored: the stream misses none of the task's events.
    const subscription = await feeds.follow(taskId);
    try {
      const snapshot = await openableTask(this.options.view, message, context);
      const { task } = snapshot;
      await turnOptions?.beforeTurn?.(taskId);
      const added = await records.add(
        {
          taskId,
          message: { ...message, contextId: task.contextId },
          tenant: context.tenant ?? '',
          owner: resolveUserScope(context),
          authenticated: context.user?.isAuthenticated ?? false,
          createdMs: Date.now(),
        },
        { head: how === 'interrupt' || how === 'rollback', max: maxPerTask },
      );
      if (added.kind === 'full')
        throw new HarnessError(
          'queue_full',
          `Task ${taskId} has ${added.size} messages waiting, as many as it may (queue.maxPerTask). Send this one again once one of them has run.`,
        );
      // Queued first, then stopped: the stopped turn's end runs this message next (a rollback's rewinding it first).
      if ((how === 'interrupt' || how === 'rollback') && added.kind === 'added') await engine.stop(taskId);
      await this.run(taskId);
      return queuedStream(subscription, snapshot, { messageId: message.messageId, position: added.position }, context);
    } catch (error) {
      subscription.close();
      throw error;
    }
  }

  /** Starts a popped message's turn under the lease taken for it; on a failure the message goes back, or the queue goes with its ended task. */
  private async startQueued(head: QueuedMessage, epoch: number): Promise<void> {
    const { engine, records, onError } = this.options;
    const context = new ServerCallContext({
      tenant: head.tenant,
      user: { isAuthenticated: head.authenticated, userName: head.owner },
    });
    let turn: StartedTurn;
    try {
      turn = await engine.startTurn(head.message, context, {
        heldEpoch: epoch,
        pastLimit: true,
        ...(whileBusyOf(head.message) === 'rollback' ? { opening: rollbackOpening } : {}),
      });
    } catch (error) {
      if (hasErrorCode(error, 'task_ended') || hasErrorCode(error, 'task_not_found')) {
        await records.drop(head.taskId);
        return;
      }
      // Kept, first again: a turn ending on the task (here or elsewhere) or a restart runs it.
      await records.add(head, { head: true, max: Number.MAX_SAFE_INTEGER });
      // This instance began draining meanwhile: another runs it.
      if (hasErrorCode(error, 'instance_draining')) return this.offer(head.taskId);
      onError(error, 'starting a queued message (kept in the queue)', head.taskId);
      return;
    }
    // Nobody reads it here: the streams waiting for the message follow the task's log.
    turn.detach();
  }
}

/**
 * A `rollback` message's turn opens with a rewind mark (CMD-37), stored in the same write as the
 * message: the turn it stopped (the task's newest user message, as `/rewind 1` finds it, and all
 * it wrote) is hidden before the new one starts. Decided on the task as its turn reads it, under
 * the lease taken for it, so a message put back in the queue and started again hides nothing twice.
 */
function rollbackOpening(task: Task | undefined): Message[] {
  const rewound = task ? rewindTo(task, 1) : undefined;
  return rewound ? [rewound.mark] : [];
}

/** The message's `tiny-harness/while-busy`: `reject` when unset; any other value is refused, naming the allowed ones. */
export function whileBusyOf(message: Message): WhileBusy {
  const value = message.metadata?.[WHILE_BUSY_KEY];
  if (value === undefined) return 'reject';
  if (typeof value === 'string' && (WHILE_BUSY_VALUES as readonly string[]).includes(value)) return value as WhileBusy;
  throw new HarnessError(
    'params_invalid',
    `message.metadata["${WHILE_BUSY_KEY}"] must be one of ${WHILE_BUSY_VALUES.map((v) => `"${v}"`).join(', ')}, not ${JSON.stringify(value) ?? String(value)}.`,
  );
}

/**
 * A queued message's stream: the task as stored, marked with the message's place
 * (`QUEUED_KEY`); then nothing until the message's own turn starts (the first task event whose
 * history ends with it); then that turn's events, as a turn's stream sends them, to its final
 * status. A task that ends before (canceled) ends the stream with its final status.
 */
async function* queuedStream(
  subscription: LogSubscription,
  { task, generation }: TaskSnapshot,
  note: QueuedNote,
  context: ServerCallContext,
): AsyncGenerator<StreamResponse, void, undefined> {
  const signal = clientGoneSignal(context);
  const stop = () => subscription.close();
  signal?.addEventListener('abort', stop, { once: true });
  try {
    const first = withGeneration(task, generation);
    first.metadata = { ...first.metadata, [QUEUED_KEY]: note };
    yield { payload: { $case: 'task', value: first } };
    let opened = false;
    for (;;) {
      const entry = await subscription.next();
      if (!entry) return;
      if (entry.generation <= generation) continue;
      const { event } = entry;
      opened ||= event.kind === 'task' && event.data.history.at(-1)?.messageId === note.messageId;
      const ended = event.kind === 'statusUpdate' && isTerminal(event.data.status?.state);
      if (!opened && !ended) continue;
      const item = asStreamResponse(entry);
      if (item) yield item;
      if (ended || isFinalStatus(event)) return;
    }
  } finally {
    signal?.removeEventListener('abort', stop);
    subscription.close();
  }
}
