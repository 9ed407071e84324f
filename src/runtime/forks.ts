/**
 * CMD-37: `/fork [n]` copies the conversation a task's model sees into a new task, in a new
 * context of the same user, with the same model. The copy keeps the messages' ids; from then
 * on the two conversations are apart: nothing written to one reaches the other.
 */
import { randomUUID } from 'node:crypto';
import { TaskState, type Task } from '@a2a-js/sdk';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import type { ForkControl, ForkOutcome } from '../commands/index.js';
import { conversationCopy, forkable } from '../conversation/forkable.js';
import { rewindPoints } from '../conversation/rewind-points.js';
import { FORKED_FROM_KEY, isInFlight, subtaskParentOf, type ForkedFrom } from '../wire.js';
import { earlierInContext } from './context-history.js';
import type { TaskEngine } from './engine.js';
import type { TaskModels } from './task-models.js';
import type { ForkRecords } from '../ports.js';

export interface ForksOptions {
  /** Where the earlier tasks of the context are read, as a turn reads them (rewound messages hidden). */
  view: Pick<TaskStore, 'list' | 'load'>;
  models: Pick<TaskModels, 'modelFor'>;
  /** Where a fork is stored, with its model, in one transaction. */
  records: ForkRecords;
  /** The writes a drain waits for. */
  engine: Pick<TaskEngine, 'track'>;
}

export class Forks implements ForkControl {
  constructor(private readonly options: ForksOptions) {}

  async fork(task: Task, n: number | undefined, callContext: ServerCallContext): Promise<ForkOutcome> {
    const { engine, models, records, view } = this.options;
    // Mid-turn, the conversation holds a request without its answer: copy it once the turn has
    // stored its end (as its client sees it end; the turn's lease may still be in hand).
    if (isInFlight(task.status?.state)) return { refused: 'turn_running' };
    const own = forkable(task.history, n);
    if (!own) return { refused: 'no_such_point', points: rewindPoints(task.history).length };
    // What the model sees before the task (CMD-35); a sub-task's parent conversation is its parent's, not copied.
    const isSubtask = subtaskParentOf(task.metadata) !== undefined;
    const earlier = isSubtask ? [] : await earlierInContext(view, task, callContext);
    const copied = conversationCopy([...earlier, ...own.messages]);
    if (copied.length === 0) return { refused: 'nothing_to_fork' };
    const model = await models.modelFor(task, callContext);
    const id = randomUUID();
    const contextId = randomUUID();
    const from: ForkedFrom = { taskId: task.id, ...(own.at ? { messageId: own.at.messageId } : {}) };
    const fork: Task = {
      id,
      contextId,
      status: { state: TaskState.TASK_STATE_INPUT_REQUIRED, message: undefined, timestamp: new Date().toISOString() },
      history: copied.map((message) => ({ ...message, taskId: id, contextId })),
      artifacts: [],
      metadata: { [FORKED_FROM_KEY]: from },
    };
    await engine.track(records.createFork(fork, model, callContext));
    return { taskId: id, contextId, messages: copied.length };
  }
}
