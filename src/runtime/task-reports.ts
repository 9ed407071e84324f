import { taskStateToJSON, type Message, type Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import type { TaskView } from './subtask-metadata.js';
import type { TaskReport, TaskReporter } from '../commands/index.js';
import type { TaskModels } from './task-models.js';
import type { TaskEngine } from './engine.js';
import { subtaskChildrenOf } from '../wire.js';
import type { TurnQueue } from './turn/turn-queue.js';
import type { TaskStateStore } from '../ports.js';

/** How much of a queued message `/status` shows. */
const PREVIEW_WORDS = 8;

/**
 * What `/status` shows of a task: its state, model, token usage, turn, sub-tasks, and push
 * notifications that failed. The task is
 * given as clients see it (`TaskView`): its sub-tasks are the links its metadata shows.
 */
export class TaskReports implements TaskReporter {
  constructor(
    /** The task's model; a hosted agent's stand-in names none (`HOSTED_AGENT_MODELS`). */
    private readonly models: Pick<TaskModels, 'modelFor'>,
    private readonly state: Pick<TaskStateStore, 'getUsage'>,
    private readonly engine: Pick<TaskEngine, 'isBusy'>,
    private readonly taskStore: Pick<TaskView, 'load'>,
    /** The push outbox: how many of a task's deliveries failed. */
    private readonly push?: { failedCount(taskId: string): Promise<number> },
    /** The tasks' queues: the messages waiting on a task. */
    private readonly queue?: Pick<TurnQueue, 'list'>,
  ) {}

  async report(task: Task, callContext: ServerCallContext): Promise<TaskReport> {
    // Read at once: on PostgreSQL in one statement (`store/reads-together.ts`).
    const [subtasks, pushFailed, queued, model, usage, turnRunning] = await Promise.all([
      Promise.all(
        subtaskChildrenOf(task.metadata).map(async (id) => ({
          id,
          state: stateName((await this.taskStore.load(id, callContext))?.status?.state),
        })),
      ),
      this.push ? this.push.failedCount(task.id) : 0,
      this.queue ? this.queue.list(task.id) : [],
      this.models.modelFor(task, callContext),
      this.state.getUsage(task.id),
      this.engine.isBusy(task.id),
    ]);
    return {
      state: stateName(task.status?.state),
      model,
      usage,
      turnRunning,
      subtasks,
      queued: queued.map(({ message }) => ({ messageId: message.messageId, preview: firstWords(message) })),
      ...(pushFailed > 0 ? { pushFailed } : {}),
    };
  }
}

function stateName(state: Parameters<typeof taskStateToJSON>[0] | undefined): string {
  return state === undefined ? 'TASK_STATE_UNSPECIFIED' : taskStateToJSON(state);
}

/** The first words of a message's text, "…" when there are more. */
function firstWords(message: Message): string {
  const text = message.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join(' ');
  const words = text.split(/\s+/).filter(Boolean);
  return words.slice(0, PREVIEW_WORDS).join(' ') + (words.length > PREVIEW_WORDS ? ' …' : '');
}
