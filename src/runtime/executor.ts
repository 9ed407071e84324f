import { randomUUID } from 'node:crypto';
import { TaskState, type Message, type Task } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import { isHarnessError } from '../errors.js';
import { agentMessage, statusUpdate } from './events.js';
import { modelHistory } from './history.js';
import type { ModelGateway } from './model-gateway.js';
import type { TaskModels } from './task-models.js';
import type { TaskStateStore } from './task-state.js';
import { TurnInterrupted, type Turn, type TurnRegistry } from './turns.js';

export interface ExecutorOptions {
  turns: TurnRegistry;
  models: TaskModels;
  gateway: ModelGateway;
  state: TaskStateStore;
  systemPrompt?: string;
  /** The state a finished turn leaves the task in: INPUT_REQUIRED keeps the conversation open. */
  endState: TaskState.TASK_STATE_INPUT_REQUIRED | TaskState.TASK_STATE_COMPLETED;
  /** The context of a stored task: the SDK's cancel path gives the executor only the task id. */
  contextOf: (taskId: string) => Promise<string | undefined>;
  /** Told about failures the user sees only as a short message. */
  onTurnError?: (error: unknown, taskId: string) => void;
}

/**
 * One turn = the task's history (without commands) to the task's model, the output streamed
 * as artifact updates as it arrives, and the whole reply as the final status message. The
 * executor never throws: the SDK would send the raw error text to the client, so every
 * failure becomes an agent message that says what failed and what to do.
 */
export class HarnessExecutor implements AgentExecutor {
  constructor(private readonly options: ExecutorOptions) {}

  async execute(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId } = context;
    const turn = this.options.turns.begin(taskId, context.context);
    const history = this.openTask(context, bus);
    bus.publish(AgentEvent.statusUpdate(statusUpdate(taskId, contextId, TaskState.TASK_STATE_WORKING)));
    let modelId = '';
    try {
      modelId = await this.options.models.modelFor({ id: taskId, contextId });
      const text = await this.runModel(turn, modelId, contextId, history, bus);
      this.finish(turn, bus, this.options.endState, agentMessage(taskId, contextId, text));
    } catch (error) {
      if (turn.abort.signal.reason instanceof TurnInterrupted) {
        this.finish(turn, bus, TaskState.TASK_STATE_INPUT_REQUIRED, agentMessage(taskId, contextId, INTERRUPTED_TEXT, 'interrupted'));
        return;
      }
      if (turn.abort.signal.aborted) {
        this.finish(turn, bus, TaskState.TASK_STATE_CANCELED, agentMessage(taskId, contextId, 'The turn was canceled.', 'canceled'));
        return;
      }
      this.options.onTurnError?.(error, taskId);
      const text = failureText(error, modelId);
      this.finish(turn, bus, TaskState.TASK_STATE_INPUT_REQUIRED, agentMessage(taskId, contextId, text, 'model-failure'));
    }
  }

  /**
   * Cancels a running turn by aborting its model request; the turn then publishes CANCELED.
   * An idle task (waiting for input, bus still alive) has nothing to abort, so CANCELED is
   * published here, or `CancelTask` would wait forever.
   */
  async cancelTask(taskId: string, bus: ExecutionEventBus): Promise<void> {
    const turn = this.options.turns.get(taskId);
    if (turn) {
      turn.abort.abort(new Error('canceled'));
      return;
    }
    const contextId = (await this.options.contextOf(taskId)) ?? '';
    bus.publish(AgentEvent.statusUpdate(statusUpdate(taskId, contextId, TaskState.TASK_STATE_CANCELED)));
  }

  /**
   * Publishes the task event every execution must start with, and returns the conversation.
   * A continued task is republished without history or artifacts: the SDK merges those from
   * the store, and a snapshot's copies would overwrite newer ones.
   */
  private openTask(context: RequestContext, bus: ExecutionEventBus): Message[] {
    const { taskId, contextId, userMessage } = context;
    const existing = context.task;
    const task: Task = existing
      ? { ...existing, history: [], artifacts: [], metadata: {}, status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() } }
      : {
          id: taskId,
          contextId,
          status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
          history: [userMessage],
          artifacts: [],
          metadata: {},
        };
    bus.publish(AgentEvent.task(task));
    const history = existing?.history ?? [];
    return history.some((m) => m.messageId === userMessage.messageId) ? history : [...history, userMessage];
  }

  private async runModel(turn: Turn, modelId: string, contextId: string, history: Message[], bus: ExecutionEventBus): Promise<string> {
    const artifactId = randomUUID();
    let chunks = 0;
    const publish = (text: string, lastChunk: boolean) => {
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId: turn.taskId,
          contextId,
          artifact: {
            artifactId,
            name: 'response',
            description: `Reply of ${modelId}`,
            parts: text ? [{ content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: {} }] : [],
            metadata: {},
            extensions: [],
          },
          append: chunks > 0,
          lastChunk,
          metadata: {},
        }),
      );
      chunks += 1;
    };
    const response = await this.options.gateway.complete({
      modelId,
      system: this.options.systemPrompt,
      messages: modelHistory(history),
      abortSignal: turn.abort.signal,
      onText: (delta) => {
        if (delta && !turn.abort.signal.aborted) publish(delta, false);
      },
    });
    if (chunks > 0) publish('', true);
    await this.options.state.addUsage(turn.taskId, { model: modelId, inputTokens: response.inputTokens, outputTokens: response.outputTokens });
    return response.text || '(The model returned no text.)';
  }

  /** Ends the turn and publishes its final status in one tick, so a command never sees a half-ended turn. */
  private finish(turn: Turn, bus: ExecutionEventBus, state: TaskState, message: Message): void {
    this.options.turns.end(turn);
    bus.publish(AgentEvent.statusUpdate(statusUpdate(turn.taskId, message.contextId, state, message)));
  }
}

/** Said when a turn was cut short by the server stopping, now or in a crash found at start-up. */
export const INTERRUPTED_TEXT = 'This turn was interrupted because the server stopped before it finished. Send your message again to continue.';

function failureText(error: unknown, modelId: string): string {
  const reason = isHarnessError(error) ? error.message : `The model request to ${modelId || 'the model'} failed unexpectedly.`;
  return `${reason} Send the message again to retry, or use /model to switch to another model (/model alone lists them).`;
}
