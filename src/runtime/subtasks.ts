import { randomUUID } from 'node:crypto';
import { Role, TaskState, taskStateToJSON, type Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import {
  ALLOWED_TOOLS_KEY,
  fullModelId,
  SUBTASK_CONTEXT_KEY,
  SUBTASK_NOTE_KEY,
  isTerminal,
  textPart,
} from '../wire.js';
import { CommandUsageError } from '../commands/index.js';
import { HarnessError, isHarnessError } from '../errors.js';
import type { TaskEngine } from './engine.js';
import { agentMessage, statusUpdate } from './events.js';
import type { SubtaskOptions, SubtaskStarter } from '../engine-ports.js';
import { AGENT_KEY, agentRunOf } from './agent-run.js';
import type { ModelOffer, TaskModels } from './task-models.js';
import type { TaskView } from './subtask-metadata.js';
import type { TurnLimit } from './turn/turn-limit.js';
import { traceParentEntry } from '../telemetry/traces.js';
import type { TaskStateStore } from '../ports.js';

/** Metadata key holding what started a sub-task (`/spawn`, `/review`), for notes and logs. */
export const SUBTASK_LABEL_KEY = 'tiny-harness/label';

const RESULT_PREVIEW_CHARS = 1000;

/** The status of a sub-task stored but never started. */
const NOT_STARTED_TEXT = 'The sub-task could not be started.';

export interface SubtasksOptions {
  /**
   * Where a new sub-task is stored (with its link and model, in one transaction), the note
   * telling a parent how its sub-task ended is posted, and a sub-task that could not start is ended.
   */
  engine: Pick<TaskEngine, 'createSubtask' | 'post' | 'settle' | 'startTurn'>;
  view: Pick<TaskView, 'load'>;
  state: TaskStateStore;
  models: TaskModels;
  offer: ModelOffer;
  /** The bound on turns in flight that the engine applies: looked at before a sub-task is stored. */
  limit?: Pick<TurnLimit, 'check' | 'max'>;
}

/**
 * Sub-tasks: full A2A tasks started by a command on a parent task, in the parent's context,
 * whose one turn works on an instruction and ends COMPLETED (or FAILED). The parent hears how
 * each ended through a note in its history, which its model sees in its next turn.
 */
export class Subtasks implements SubtaskStarter {
  constructor(private readonly options: SubtasksOptions) {}

  async start(
    parent: Task,
    instruction: string,
    { callContext, model, label, allowedTools, context, agent }: SubtaskOptions,
  ): Promise<string> {
    const { engine, models, offer } = this.options;
    const modelId =
      model === undefined
        ? await models.modelFor(parent, callContext)
        : fullModelId(
            model,
            offer.list().map((choice) => choice.id),
          );
    if (!offer.has(modelId)) {
      throw new HarnessError(
        'model_unknown',
        `The model ${modelId} is not offered here. Offered: ${offer
          .list()
          .map((m) => m.id)
          .join(', ')}.`,
      );
    }
    try {
      this.options.limit?.check();
    } catch (error) {
      // Nothing is stored for a turn that would be refused: the command says so, and can be sent again.
      throw this.asReply(error, undefined, agent !== undefined);
    }
    // A UUID, like every task id: the SDK's database stores hold ids in 36 characters.
    const id = randomUUID();
    const subtask: Task = {
      id,
      contextId: parent.contextId,
      status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
      history: [],
      artifacts: [],
      metadata: {
        ...(label ? { [SUBTASK_LABEL_KEY]: label } : {}),
        ...(allowedTools ? { [ALLOWED_TOOLS_KEY]: allowedTools } : {}),
        ...(context ? { [SUBTASK_CONTEXT_KEY]: context } : {}),
        ...(agent ? { [AGENT_KEY]: agent } : {}),
        ...traceParentEntry(),
      },
    };
    await engine.createSubtask(subtask, parent.id, modelId, callContext);
    try {
      // Before its turn begins, so that the parent hears of the start before the end.
      if (agent) {
        const text = `Sub-agent ${agent.name} started as sub-task ${id}.`;
        await this.note(parent.id, id, TaskState.TASK_STATE_WORKING, text, agent.name, callContext);
      }
      await this.run(subtask, parent, instruction, callContext);
    } catch (error) {
      // Stored, but no turn will ever run it: it ends FAILED now rather than stay SUBMITTED.
      const atLimit = isHarnessError(error) && error.code === 'turns_at_limit';
      const text = atLimit ? `${NOT_STARTED_TEXT} The server was at its limit of running turns.` : NOT_STARTED_TEXT;
      const why = agentMessage(id, parent.contextId, text);
      const failed = statusUpdate(id, parent.contextId, TaskState.TASK_STATE_FAILED, why);
      await this.options.engine
        .settle(id, callContext, (task) => (isTerminal(task.status?.state) ? undefined : failed))
        .catch((saveError: unknown) => {
          throw new AggregateError([error, saveError], 'A sub-task could not start, nor be marked as failed.');
        });
      throw this.asReply(error, id, agent !== undefined);
    }
    return id;
  }

  /**
   * A refusal because this instance runs as many turns as it may becomes a reply in the
   * conversation (CMD-12), as a mistake the user fixes by sending the command again later; any
   * other error stays as it is. `storedId`: the sub-task was stored (and has ended FAILED).
   * `forModel`: the `delegate` tool's model reads it, not a person who sent a command.
   */
  private asReply(error: unknown, storedId?: string, forModel = false): unknown {
    if (!isHarnessError(error) || error.code !== 'turns_at_limit') return error;
    const what = storedId
      ? `The sub-task ${storedId} could not start (it ended failed)`
      : 'The sub-task was not started';
    const max = this.options.limit?.max;
    const limit = max === undefined ? 'running turns' : `${max} running turn${max === 1 ? '' : 's'}`;
    return new CommandUsageError(
      `${what}: this server is at its limit of ${limit}. ` +
        (forModel
          ? 'Delegate again once one has finished, or do the work yourself.'
          : 'Send the command again in a few seconds, once one has finished.'),
    );
  }

  /** Starts the sub-task's one turn on its instruction; resolves once the turn has begun (it runs on). */
  private async run(subtask: Task, parent: Task, instruction: string, callContext: ServerCallContext): Promise<void> {
    const turn = await this.options.engine.startTurn(
      {
        messageId: randomUUID(),
        taskId: subtask.id,
        contextId: parent.contextId,
        role: Role.ROLE_USER,
        parts: [textPart(instruction)],
        metadata: {},
        extensions: [],
        referenceTaskIds: [parent.id],
      },
      callContext,
    );
    // Nobody reads the sub-task's stream here: its clients follow the task.
    turn.detach();
  }

  /**
   * Tells the parent that a sub-task ended, or paused waiting for approval (CMD-33): one agent
   * note in its history, as a status update that leaves its state alone (so a client subscribed
   * to the parent sees it). Nothing when the task has no parent or the parent has ended.
   */
  async ended(
    subtask: Pick<Task, 'id' | 'metadata'>,
    state: TaskState,
    text: string,
    context: ServerCallContext | undefined,
  ): Promise<void> {
    const { parent: parentId } = await this.options.state.getLinks(subtask.id);
    if (!parentId || !context) return;
    const label =
      typeof subtask.metadata?.[SUBTASK_LABEL_KEY] === 'string' ? ` (${subtask.metadata[SUBTASK_LABEL_KEY]})` : '';
    const agent = agentRunOf(subtask.metadata)?.name;
    await this.note(parentId, subtask.id, state, noteText(subtask.id, label, state, text), agent, context);
  }

  /** Posts a note about a sub-task in its parent's history; nothing once the parent has ended. */
  private async note(
    parentId: string,
    subtaskId: string,
    state: TaskState,
    text: string,
    agent: string | undefined,
    context: ServerCallContext,
  ): Promise<void> {
    const parent = await this.options.view.load(parentId, context);
    if (!parent || isTerminal(parent.status?.state)) return;
    const note = agentMessage(parent.id, parent.contextId, text);
    note.metadata = {
      [SUBTASK_NOTE_KEY]: { id: subtaskId, state: taskStateToJSON(state), ...(agent ? { agent } : {}) },
    };
    note.referenceTaskIds = [subtaskId];
    const update = statusUpdate(
      parent.id,
      parent.contextId,
      parent.status?.state ?? TaskState.TASK_STATE_INPUT_REQUIRED,
      note,
    );
    await this.options.engine.post(update, context);
  }
}

function noteText(id: string, label: string, state: TaskState, text: string): string {
  const result = text.length > RESULT_PREVIEW_CHARS ? `${text.slice(0, RESULT_PREVIEW_CHARS)}…` : text;
  switch (state) {
    case TaskState.TASK_STATE_COMPLETED:
      return `Sub-task ${id}${label} completed. Its result:\n${result}`;
    case TaskState.TASK_STATE_CANCELED:
      return `Sub-task ${id}${label} was canceled.`;
    case TaskState.TASK_STATE_INPUT_REQUIRED:
      return `Sub-task ${id}${label} is waiting for approval of its tool calls: answer on that task with /approve or /deny.`;
    default:
      return `Sub-task ${id}${label} failed: ${result}`;
  }
}
