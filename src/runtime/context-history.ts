/**
 * CMD-35: a conversation is a context, not a task. A new task in a context the user used
 * before (after a `CancelTask`, or a task that completed) continues the conversation: its model
 * is sent the earlier tasks of that context too, oldest first, before the task's own messages.
 * Only the caller's own tasks are read (the store scopes them), and not sub-tasks, whose
 * results their parents hold already as notes. The budget (`contextChars`) applies to the
 * whole, newest kept, as for one task.
 *
 * A sub-task is sent its parent's conversation instead (up to the command that started it,
 * which is where the parent stands when the sub-task's turn begins), unless the command file
 * that started it says `context: none`.
 */
import { TaskState, type ListTasksRequest, type Message, type Task } from '@a2a-js/sdk';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import { SUBTASK_CONTEXT_KEY, subtaskParentOf } from '../wire.js';

/** The most earlier tasks of a context read for one turn: the newest of them. */
export const EARLIER_TASKS_READ = 20;

/**
 * What a turn's model is sent before the task's own messages: the caller's earlier tasks in
 * the task's context, oldest first; for a sub-task, its parent's conversation.
 */
export async function earlierInContext(
  store: Pick<TaskStore, 'list' | 'load'>,
  task: Pick<Task, 'id' | 'contextId' | 'metadata'>,
  callContext: ServerCallContext,
): Promise<Message[]> {
  const parent = subtaskParentOf(task.metadata);
  if (parent !== undefined) {
    if (task.metadata?.[SUBTASK_CONTEXT_KEY] === 'none') return [];
    return (await store.load(parent, callContext))?.history ?? [];
  }
  const request: ListTasksRequest = {
    tenant: callContext.tenant ?? '',
    contextId: task.contextId,
    status: TaskState.TASK_STATE_UNSPECIFIED,
    pageSize: EARLIER_TASKS_READ + 1,
    pageToken: '',
    historyLength: undefined,
    statusTimestampAfter: undefined,
    includeArtifacts: false,
  };
  const { tasks } = await store.list(request, callContext);
  const earlier = tasks
    .filter((other) => other.id !== task.id && subtaskParentOf(other.metadata) === undefined)
    .slice(0, EARLIER_TASKS_READ);
  // The list is newest first (by status time): the conversation reads oldest first.
  return earlier.reverse().flatMap((other) => other.history);
}
