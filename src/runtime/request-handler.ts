import {
  TaskState,
  type AgentCard,
  type CancelTaskRequest,
  type DeleteTaskPushNotificationConfigRequest,
  type GetExtendedAgentCardRequest,
  type GetTaskPushNotificationConfigRequest,
  type GetTaskRequest,
  type ListTaskPushNotificationConfigsRequest,
  type ListTaskPushNotificationConfigsResponse,
  type ListTasksRequest,
  type ListTasksResponse,
  type Message,
  type SendMessageRequest,
  type StreamResponse,
  type SubscribeToTaskRequest,
  type Task,
  type TaskPushNotificationConfig,
  type TaskStatusUpdateEvent,
} from '@a2a-js/sdk';
import type { A2ARequestHandler, AgentExecutionEvent, ServerCallContext } from '@a2a-js/sdk/server';
import { ExtendedAgentCardNotConfiguredError, PushNotificationNotSupportedError } from '@a2a-js/sdk/errors';
import { lastEventId, type GenerationParams } from '../a2a/index.js';
import { DEFAULT_ANSWER_HISTORY } from '../commands/index.js';
import { HarnessError } from '../errors.js';
import { FROM_COMMAND_KEY, GENERATION_KEY, MESSAGE_REPLY_KEY, QUEUED_KEY } from '../wire.js';
import type { TaskEngine } from './engine.js';
import type { TaskView } from './subtask-metadata.js';
import { followTask, type FollowTarget } from './task-follower.js';
import type { PushConfigs } from './push-configs.js';
import type { TurnQueue } from './turn/turn-queue.js';
import { isFinalStatus } from './turn/turn-stream.js';
import type { ElicitationAnswers } from './elicitation-answers.js';

/** The page size `ListTasks` uses when the request sets none (the SDK's). */
const DEFAULT_PAGE_SIZE = 50;

/**
 * The A2A operations of the harness, each a short call of the engine. The SDK serves them over
 * its three transports (JSON-RPC, HTTP+JSON, gRPC); what applies around every call (error
 * mapping, the commands extension, message claims) is the request path's (`request-path.ts`).
 */
export class HarnessRequestHandler implements A2ARequestHandler {
  constructor(
    private readonly engine: Pick<TaskEngine, 'startTurn' | 'cancel' | 'isBusy'>,
    private readonly tasks: TaskView,
    private readonly feeds: FollowTarget['feeds'],
    private readonly card: () => Promise<AgentCard> | AgentCard,
    /** Push notifications' configs (docs/push.md); without them the four operations are refused. */
    private readonly push?: PushConfigs,
    /** Where a message sent while its task is busy is queued (spec/while-busy-extension-v1.md); none: refused. */
    private readonly queue?: Pick<TurnQueue, 'send' | 'drop'>,
    /** Answers to tool calls' questions (issue 39); none: such a message is an ordinary one. */
    private readonly elicitations?: Pick<ElicitationAnswers, 'answer'>,
  ) {}

  async getAgentCard(): Promise<AgentCard> {
    return this.card();
  }

  /**
   * The extended card, to a signed-in caller only (issue 38): the card as it stands; the
   * `commands` step adds every command, those offered to signed-in callers only included. Where
   * callers do not sign in the card offers none (A2A's "not configured"); an anonymous caller is
   * refused as the edge refuses a request without a valid token.
   */
  async getAuthenticatedExtendedAgentCard(
    _params: GetExtendedAgentCardRequest,
    context: ServerCallContext,
  ): Promise<AgentCard> {
    const card = await this.card();
    if (!card.capabilities?.extendedAgentCard)
      throw new ExtendedAgentCardNotConfiguredError(
        'This agent has no extended card: callers do not sign in to it (no tokens are configured).',
      );
    if (context.user?.isAuthenticated !== true)
      throw new HarnessError(
        'unauthenticated',
        'The extended agent card is for signed-in callers: send "Authorization: Bearer <token>" with a token this server knows.',
      );
    return card;
  }

  /**
   * A turn, answered once it has ended with the task as stored, carrying the history
   * `historyLength` asks for (unset: the message and its reply, `DEFAULT_ANSWER_HISTORY`);
   * with `returnImmediately`, once its first event is stored.
   */
  sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    return answerBlocking(this.sendMessageStream(params, context), params, context, (p, c) => this.getTask(p, c));
  }

  async *sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const message = requireMessage(params);
    const pushConfig = params.configuration?.taskPushNotificationConfig;
    const beforeTurn =
      pushConfig && this.push ? await this.push.forTurn(pushConfig, context, Boolean(message.taskId)) : undefined;
    // A2A 1.1's `ifGenerationMatch`, put on the params by the binding (a2a/version-fields.ts).
    const ifGeneration = (params as GenerationParams).ifGenerationMatch;
    const options =
      beforeTurn || ifGeneration !== undefined
        ? { ...(beforeTurn && { beforeTurn }), ...(ifGeneration !== undefined && { ifGeneration }) }
        : undefined;
    const answered = await this.elicitations?.answer(message, context);
    if (answered) return yield* answered;
    if (this.queue) return yield* await this.queue.send(message, context, options);
    const turn = await this.engine.startTurn(message, context, options);
    yield* turn.events;
  }

  async getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    const task = await this.tasks.load(requireTaskId(params.id), context);
    if (!task) throw new HarnessError('task_not_found', `Task not found: ${params.id}`);
    return withHistoryLength(task, params.historyLength);
  }

  /** `ListTasks`, checked as the SDK checks it. */
  async listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const pageSize = params.pageSize ?? DEFAULT_PAGE_SIZE;
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 100)
      throw new HarnessError('params_invalid', 'pageSize must be between 1 and 100');
    if (params.status !== undefined && !Object.values(TaskState).includes(params.status))
      throw new HarnessError('params_invalid', `Invalid status filter: ${String(params.status)}`);
    if (params.statusTimestampAfter && Number.isNaN(Date.parse(params.statusTimestampAfter)))
      throw new HarnessError('params_invalid', 'statusTimestampAfter must be a valid ISO 8601 date string');
    const page = await this.tasks.list({ ...params, pageSize }, context);
    return { ...page, tasks: page.tasks.map((task) => withHistoryLength(task, params.historyLength)) };
  }

  /** `CancelTask` (CMD-31): the engine cancels the task and its sub-tasks; the answer is the task as `GetTask` shows it. */
  async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    await this.engine.cancel(requireTaskId(params.id), context);
    // The task has ended: the messages waiting on it go (their streams end on its CANCELED).
    await this.queue?.drop(params.id);
    return this.getTask({ tenant: params.tenant, id: params.id }, context);
  }

  /**
   * `SubscribeToTask`: the task as stored, then its log, from any instance. Unlike the SDK's, an
   * idle task's stream stays open for a later command reply (CMD-8).
   */
  resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    return followTask(
      {
        read: (id, ctx) => this.tasks.read(id, ctx),
        readLog: (id, after) => this.tasks.readLog(id, after),
        feeds: this.feeds,
        isBusy: (id) => this.engine.isBusy(id),
      },
      params.id,
      context,
      { follow: 'live', refuseEnded: true, resumeAfter: lastEventId(context) },
    );
  }

  async createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    return this.pushConfigs().create(params, context);
  }

  async getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    return this.pushConfigs().get(params.taskId, params.id, context, params.tenant);
  }

  async listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    const { tenant, pageSize, pageToken } = params;
    return this.pushConfigs().list(params.taskId, context, { tenant, pageSize, pageToken });
  }

  async deleteTaskPushNotificationConfig(
    params: DeleteTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<void> {
    return this.pushConfigs().delete(params.taskId, params.id, context);
  }

  private pushConfigs(): PushConfigs {
    if (!this.push) throw new PushNotificationNotSupportedError();
    return this.push;
  }
}

/**
 * A blocking `SendMessage`, answered from the turn's stream: once it has ended, the task as its
 * end left it, carrying the history `historyLength` asks for (unset: the message and its reply,
 * `DEFAULT_ANSWER_HISTORY`); with `returnImmediately`, once its first event is stored.
 */
export async function answerBlocking(
  stream: AsyncGenerator<StreamResponse, void, undefined>,
  params: SendMessageRequest,
  context: ServerCallContext,
  getTask: (params: GetTaskRequest, context: ServerCallContext) => Promise<Task>,
): Promise<Message | Task> {
  let taskId: string | undefined;
  let last: TaskStatusUpdateEvent | undefined;
  const historyLength = params.configuration?.historyLength ?? DEFAULT_ANSWER_HISTORY;
  try {
    for await (const { payload } of stream) {
      if (payload?.$case === 'message') return payload.value;
      taskId ??= payload?.$case === 'task' ? payload.value.id : payload?.value.taskId;
      if (payload?.$case === 'statusUpdate') last = payload.value;
      // A queued message's answer is the Task marking its place (spec/while-busy-extension-v1.md).
      if (params.configuration?.returnImmediately && payload?.$case === 'task' && payload.value.metadata?.[QUEUED_KEY])
        return withHistoryLength(payload.value, historyLength);
      if (params.configuration?.returnImmediately) break;
    }
  } finally {
    await stream.return(undefined);
  }
  if (!taskId) throw new HarnessError('store_failed', 'The turn ended before its task was stored.');
  // A hosted agent that answered with a Message (A2A's message response) is answered so, as the SDK's handler does.
  if (last?.metadata?.[MESSAGE_REPLY_KEY] === true && last.status?.message && isFinalStatus(statusEvent(last)))
    return last.status.message;
  const task = await getTask({ tenant: params.tenant, id: taskId }, context);
  return withHistoryLength(last && isFinalStatus(statusEvent(last)) ? asItEnded(task, last) : task, historyLength);
}

/**
 * The task as the turn's final status left it. The task's next turn (a message queued behind
 * this one, another interrupt, on any instance) may have opened before the task was read: its
 * WORKING is not this answer's, nor are its messages. The artifacts are the task's as read.
 */
function asItEnded(task: Task, end: TaskStatusUpdateEvent): Task {
  const ended = end.status!;
  const endId = ended.message?.messageId;
  if (task.status?.state === ended.state && task.status.message?.messageId === endId) return task;
  const at = endId ? task.history.findLastIndex((message) => message.messageId === endId) : -1;
  // Its generation is the end's, when the stream said it.
  const metadata: Record<string, unknown> = { ...task.metadata, [GENERATION_KEY]: end.metadata?.[GENERATION_KEY] };
  if (metadata[GENERATION_KEY] === undefined) delete metadata[GENERATION_KEY];
  return { ...task, status: ended, history: at < 0 ? task.history : task.history.slice(0, at + 1), metadata };
}

function statusEvent(update: TaskStatusUpdateEvent): AgentExecutionEvent {
  return { kind: 'statusUpdate', data: update };
}

function requireMessage(params: SendMessageRequest): Message {
  if (!params.message) throw new HarnessError('params_invalid', 'request.message is required.');
  if (!params.message.messageId) throw new HarnessError('params_invalid', 'message.messageId is required.');
  // Only a command writes it (CMD-38): a client's words are never taken for a command's.
  if (params.message.metadata?.[FROM_COMMAND_KEY] !== undefined)
    throw new HarnessError('params_invalid', `message.metadata["${FROM_COMMAND_KEY}"] is written by the harness only.`);
  return params.message;
}

function requireTaskId(id: string | undefined): string {
  if (!id?.trim()) throw new HarnessError('params_invalid', 'Task ID is required');
  return id;
}

/** The SDK's `historyLength` rule: unset keeps all, 0 or less keeps none, n keeps the last n. */
function withHistoryLength(task: Task, historyLength: number | undefined): Task {
  if (historyLength === undefined) return task;
  return { ...task, history: historyLength <= 0 ? [] : task.history.slice(-historyLength) };
}
