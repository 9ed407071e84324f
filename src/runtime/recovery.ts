import { TaskState } from '@a2a-js/sdk';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { agentMessage, statusUpdate } from './events.js';
import type { TaskEngine } from './engine.js';
import { INTERRUPTED_TEXT, SUBTASK_INTERRUPTED_TEXT } from './turn/turn-end.js';
import { closingParts, openToolCalls } from './tool-calls.js';
import type { TaskStateStore } from '../ports.js';
import type { ElicitationAnswers } from './elicitation-answers.js';

/** A task found in flight (SUBMITTED or WORKING) in the store, with the scope it is stored in. */
export interface InFlightTask {
  id: string;
  tenant: string;
  owner: string;
}

export interface RecoveryOptions {
  engine: TaskEngine;
  store: {
    /** Tasks in flight whose row has not changed for `unchangedForMs`. */
    listInterrupted(options: { unchangedForMs: number }): Promise<InFlightTask[]>;
    scopeOfTask(taskId: string): Promise<{ tenant: string; owner: string } | undefined>;
  };
  links: Pick<TaskStateStore, 'getLinks'>;
  /** A tool call's answer recorded for a turn that went away before its call read it (`ElicitationAnswers`). */
  answers?: Pick<ElicitationAnswers, 'resumeUnread'>;
}

/**
 * Ends turns that were cut short: by a stop of this process (found at start-up) or by the death
 * of another instance sharing the store (its leases swept, `Coordination.onOrphanedTurns`).
 * Each task is checked under its write lock: one still in flight and held by no turn ends as
 * a restart ends it, waiting for input with a message saying so; a sub-task, which has one
 * turn, ends FAILED and its parent is told. A task whose turn waited on a question answered
 * but not yet read goes on as an answer given once no turn runs (`ElicitationAnswers`). The end is published like any event, so streams
 * open on the task anywhere see it. Resolves with how many tasks were ended.
 */
export class TurnRecovery {
  constructor(private readonly options: RecoveryOptions) {}

  /** Start-up: every task left in flight that no live turn holds. */
  async recoverAtStart(): Promise<number> {
    const { store, engine } = this.options;
    return this.recover(await store.listInterrupted({ unchangedForMs: engine.coordination.settleMs }));
  }

  /** Tasks whose turns' instance died. */
  async recoverTasks(taskIds: readonly string[]): Promise<number> {
    const found: InFlightTask[] = [];
    for (const id of taskIds) {
      const scope = await this.options.store.scopeOfTask(id);
      if (scope) found.push({ id, ...scope });
    }
    return this.recover(found);
  }

  private async recover(tasks: readonly InFlightTask[]): Promise<number> {
    let ended = 0;
    for (const task of tasks) if (await this.recoverOne(task)) ended++;
    return ended;
  }

  private async recoverOne({ id, tenant, owner }: InFlightTask): Promise<boolean> {
    const { engine, links } = this.options;
    const context = new ServerCallContext({ tenant, user: { isAuthenticated: false, userName: owner } });
    const isSubtask = (await links.getLinks(id)).parent !== undefined;
    const state = isSubtask ? TaskState.TASK_STATE_FAILED : TaskState.TASK_STATE_INPUT_REQUIRED;
    const text = isSubtask ? SUBTASK_INTERRUPTED_TEXT : INTERRUPTED_TEXT;
    let metadata: Record<string, unknown> | undefined;
    const update = await engine.settle(id, context, async (task) => {
      const now = task.status?.state;
      if (now !== TaskState.TASK_STATE_SUBMITTED && now !== TaskState.TASK_STATE_WORKING) return undefined;
      if (await engine.isBusy(id)) return undefined; // a new turn took the task meanwhile
      metadata = task.metadata;
      const message = agentMessage(id, task.contextId, text, 'interrupted');
      message.parts.push(...closingParts(openToolCalls(task.history)));
      return statusUpdate(id, task.contextId, state, message);
    });
    if (!update) {
      const resumed = await this.options.answers?.resumeUnread(id, context);
      resumed?.detach();
      return resumed !== undefined;
    }
    if (isSubtask) engine.ended({ task: { id, metadata }, state, text, context });
    return true;
  }
}
