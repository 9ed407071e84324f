/** The events a stub agent of the SDK publishes on its bus, for tests that need an agent without the harness. */
import { randomUUID } from 'node:crypto';
import { TaskState, type Message, type Part } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutionEvent, type RequestContext } from '@a2a-js/sdk/server';

/**
 * The task a turn starts with, in `state` (SUBMITTED by default). Its history is the user's
 * message when the task is new (`history: 'always'`: on every turn, as a bare agent that forgets does).
 */
export function startedTask(
  { taskId, contextId, userMessage, task }: Pick<RequestContext, 'taskId' | 'contextId' | 'userMessage' | 'task'>,
  {
    state = TaskState.TASK_STATE_SUBMITTED,
    history = 'new task',
    timestamp = new Date().toISOString(),
  }: { state?: TaskState; history?: 'new task' | 'always'; timestamp?: string } = {},
): AgentExecutionEvent {
  return AgentEvent.task({
    id: taskId,
    contextId,
    status: { state, message: undefined, timestamp },
    history: task && history === 'new task' ? [] : [userMessage],
    artifacts: [],
    metadata: {},
  });
}

/** An artifact update carrying `parts`; by default one whole artifact of its own. */
export function artifactUpdate(
  taskId: string,
  contextId: string,
  parts: Part[],
  {
    artifactId = randomUUID(),
    name = 'r',
    append = false,
    lastChunk = true,
  }: { artifactId?: string; name?: string; append?: boolean; lastChunk?: boolean } = {},
): AgentExecutionEvent {
  return AgentEvent.artifactUpdate({
    taskId,
    contextId,
    artifact: { artifactId, name, description: '', parts, metadata: {}, extensions: [] },
    append,
    lastChunk,
    metadata: {},
  });
}

export function statusUpdate(
  taskId: string,
  contextId: string,
  state: TaskState,
  message?: Message,
  timestamp = new Date().toISOString(),
): AgentExecutionEvent {
  return AgentEvent.statusUpdate({ taskId, contextId, status: { state, message, timestamp }, metadata: {} });
}
