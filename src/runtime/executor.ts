import { randomUUID } from 'node:crypto';
import { TaskState, type Message, type Task, type TaskStatusUpdateEvent } from '@a2a-js/sdk';
import { AgentEvent, type ServerCallContext } from '@a2a-js/sdk/server';
import { isHarnessError } from '../errors.js';
import { agentMessage, replyChunk, statusUpdate } from './events.js';
import { CoalescedText } from './coalesced-text.js';
import { buildConversation, cutText, type InstructionFile } from '../conversation/build.js';
import type { ModelGateway, ModelResponse } from './model-gateway.js';
import { Compactor, type CompactorOptions } from './compactor.js';
import type { TaskModels } from './task-models.js';
import { toolCallMessage, TurnToolCalls, type ApprovalDecision } from './tool-calls.js';
import { pauseText, RESUME_NOTICE, waitingCalls } from './tool-approvals.js';
import {
  AWAITING_APPROVAL_NOTICE,
  CONTEXT_CUT_NOTICE,
  dataPart,
  NOTICE_KEY,
  RETRYING_NOTICE,
  subtaskParentOf,
  TOOLS_MISSING_NOTICE,
} from '../wire.js';
import { allowedEntries, mayAllowServer, missingToolsText } from '../tools/index.js';
import type { ToolBox } from '../tools/index.js';
import { grantedEntries } from './tool-grants.js';
import { agentRunOf, allowedToolsOf } from './agent-run.js';
import type { Turn, TurnEnd } from '../engine-ports.js';
import { TurnCanceled, TurnFenced, TurnInterrupted, TurnStopped, TurnUnwritten } from './turn/turns.js';
import { openingTask, TurnOpening, type TurnPublisher } from './turn/turn-opening.js';
import { conversationEnd, subtaskEnd, type TurnOutcome } from './turn/turn-end.js';
import { commandOfTurn } from './turn/command-turns.js';
import type { TaskStateStore, ToolGrants } from '../ports.js';
import { restated, TurnQuestions, type ElicitationSettings } from './elicitation-waits.js';

export interface ExecutorOptions {
  models: TaskModels;
  gateway: ModelGateway;
  state: TaskStateStore;
  systemPrompt?: string;
  /** The instruction files' texts as they stand now, sent after the system prompt in order (none without it). */
  instructions?: () => readonly InstructionFile[];
  /** The most characters of conversation a turn sends to the given model (default: all of it). */
  contextCharsFor?: (modelId: string) => number;
  /**
   * Compaction (CMD-36): a turn past `autoAt` of its budget summarises the conversation first,
   * bounded by `timeoutMs`; none, the conversation is only cut to fit.
   */
  compact?: CompactorOptions['compact'];
  /** The state a finished turn leaves the task in: INPUT_REQUIRED keeps the conversation open. */
  endState: TaskState.TASK_STATE_INPUT_REQUIRED | TaskState.TASK_STATE_COMPLETED;
  /**
   * What the model is sent before the task's own messages (CMD-35): the caller's earlier tasks
   * of the context, or a sub-task's parent conversation. None without it.
   */
  earlier?: (task: Pick<Task, 'id' | 'contextId' | 'metadata'>, callContext: ServerCallContext) => Promise<Message[]>;
  /** The tools every turn's model may call (MCP servers), and the servers a turn goes without; none without it. */
  tools?: Pick<ToolBox, 'list'>;
  /** The tools the user allowed for good in the conversation (TOOL-5): their calls run without asking. */
  grants?: Pick<ToolGrants, 'list'>;
  /** The most model-and-tool steps in one turn (default 20). */
  maxSteps?: number;
  /** Tool calls' questions to the user (MCP elicitation, issue 39); none: every question is declined. */
  elicitations?: ElicitationSettings;
  /** Told about failures the user sees only as a short message. */
  onTurnError?: (error: unknown, taskId: string) => void;
}

/** What starts a turn: its task (as stored before it, none for a new task) and the message. */
export interface TurnRequest {
  taskId: string;
  contextId: string;
  userMessage: Message;
  /** Messages stored before `userMessage`, in the turn's opening write (`TurnOptions.opening`). */
  opening?: Message[];
  /**
   * The task as stored before the turn, as the engine's view reads it: a sub-task's parent shown
   * in its metadata (`SUBTASKS_KEY`), which decides how the turn ends. None for a new task.
   */
  task: Task | undefined;
  /** The call that started the turn (or the command that resumed it): its user's scope. */
  context: ServerCallContext;
}

/** How a turn ended: the final status to store (none when fenced), and the end to tell a sub-task's parent. */
export interface TurnResult {
  final?: TaskStatusUpdateEvent;
  told?: TurnEnd;
}

/**
 * One turn = the task's history (without commands) to the task's model, the output streamed
 * as artifact updates as it arrives, and the whole reply as the final status message, which the
 * engine stores (`TaskEngine`). The executor never throws: every failure becomes an agent
 * message that says what failed and what to do.
 */
export class HarnessExecutor {
  /** What summarises conversations, for turns and for `/compact` alike; none without `compact`. */
  readonly compactor: Compactor | undefined;

  constructor(private readonly options: ExecutorOptions) {
    this.compactor = options.compact && new Compactor({ ...options, compact: options.compact });
  }

  /** What a turn's model request is built from, so that `/context` builds the next one the same way. */
  get requestInputs(): Pick<
    ExecutorOptions,
    'models' | 'state' | 'systemPrompt' | 'instructions' | 'contextCharsFor' | 'earlier' | 'tools'
  > {
    return this.options;
  }

  async run(context: TurnRequest, turn: Turn, publisher: TurnPublisher): Promise<TurnResult> {
    const { taskId, contextId } = context;
    const { task, history } = this.openTask(context);
    // Published once the model request is on its way (see `TurnOpening`); every later event goes through it.
    const turnBus = new TurnOpening(publisher, [
      AgentEvent.task(task),
      AgentEvent.statusUpdate(statusUpdate(taskId, contextId, TaskState.TASK_STATE_WORKING)),
    ]);
    const publishStatus = (update: TaskStatusUpdateEvent) => turnBus.publish(AgentEvent.statusUpdate(update));
    const { elicitations } = this.options;
    const questions =
      elicitations && new TurnQuestions({ taskId, contextId, signal: turn.abort.signal }, publishStatus, elicitations);
    const calls = new TurnToolCalls(
      taskId,
      contextId,
      publishStatus,
      (update) => turnBus.publish(AgentEvent.artifactUpdate(update)),
      questions,
    );
    // Read beside the turn's start, awaited only where the model request is built.
    const earlier = this.options.earlier ? this.earlierMessages(taskId, contextId, context) : Promise.resolve([]);
    // An inline command's turn (CMD-38) has its file's grants; a sub-task has them in its metadata.
    const command = commandOfTurn(history, context.userMessage);
    const outcome = await this.runTurn(turn, contextId, history, turnBus, calls, {
      started: context.userMessage,
      allowedTools: command?.allowedTools ?? allowedToolsOf(context.task?.metadata),
      model: command?.model,
      metadata: context.task?.metadata,
      earlier,
    });
    const waiting = outcome.kind === 'replied' ? calls.waiting() : [];
    calls.close({ keepWaiting: waiting.length > 0 });
    // Fenced: the task is another instance's now, which has ended this turn; nothing more of it is said.
    if (turn.abort.signal.reason instanceof TurnFenced) return {};
    // A sub-task's parent is in its links, which the engine's view showed in the task it read at the turn's start.
    const isSubtask = subtaskParentOf(context.task?.metadata) !== undefined;
    const told = (state: TaskState, text: string): TurnEnd | undefined =>
      isSubtask
        ? { task: { id: taskId, metadata: context.task?.metadata }, state, text, context: context.context }
        : undefined;
    if (waiting.length > 0) {
      // CMD-33: the turn waits for a person's answer, a sub-task's too; `/approve` or `/deny` resumes it.
      const pause = agentMessage(taskId, contextId, pauseText(waiting), AWAITING_APPROVAL_NOTICE);
      pause.parts.push(...waiting.map((call) => dataPart({ ...call })));
      // A sub-task's parent is told, or nobody following only the parent would know to answer.
      return {
        final: this.finish(turnBus, TaskState.TASK_STATE_INPUT_REQUIRED, pause),
        told: told(TaskState.TASK_STATE_INPUT_REQUIRED, ''),
      };
    }
    // Interrupted (a restart) while a server's question waited: the task still asks it (issue 39).
    const asked = outcome.kind === 'interrupted' ? questions?.newestWaiting() : undefined;
    if (asked)
      return { final: this.finish(turnBus, asked.state, restated(asked.message)), told: told(asked.state, '') };
    const { state, text, notice } = isSubtask ? subtaskEnd(outcome) : conversationEnd(outcome, this.options.endState);
    // What the model wrote, cut short or not, is the model's, which later turns send it; a notice is the harness's.
    const model = !notice && 'model' in outcome ? outcome.model : undefined;
    return {
      final: this.finish(turnBus, state, agentMessage(taskId, contextId, text, notice, model)),
      told: told(state, text),
    };
  }

  /** Runs the model; never throws: every way a turn can end is an outcome. */
  private async runTurn(
    turn: Turn,
    contextId: string,
    history: Message[],
    bus: TurnPublisher,
    calls: TurnToolCalls,
    start: TurnStart,
  ): Promise<TurnOutcome> {
    let modelId = '';
    /** What the model wrote so far: a turn cut short keeps it (CMD-32, a store failure). */
    const written = { text: '' };
    try {
      modelId = start.model ?? (await this.options.models.modelFor({ id: turn.taskId, contextId }, turn.context));
      const reply = await this.runModel(turn, modelId, contextId, history, bus, calls, start, written);
      // Canceled as the model finished: the task is canceled all the same (the engine stores CANCELED).
      if (turn.abort.signal.reason instanceof TurnCanceled) return { kind: 'canceled' };
      return { kind: reply.stopped ? 'stopped' : 'replied', text: reply.text, model: modelId };
    } catch (error) {
      if (turn.abort.signal.reason instanceof TurnInterrupted) return { kind: 'interrupted' };
      if (turn.abort.signal.reason instanceof TurnUnwritten)
        return { kind: 'store-failure', text: written.text, model: modelId };
      if (turn.abort.signal.reason instanceof TurnStopped) return { kind: 'stopped', text: '', model: modelId };
      if (turn.abort.signal.aborted) return { kind: 'canceled' };
      this.options.onTurnError?.(error, turn.taskId);
      // The store failed under the turn (a task read, the usage written): no fault of the model.
      if (isHarnessError(error) && error.code === 'store_failed')
        return { kind: 'store-failure', text: written.text, model: modelId };
      const reason = isHarnessError(error)
        ? error.message
        : `The model request to ${modelId || 'the model'} failed unexpectedly.`;
      return { kind: 'model-failure', reason };
    }
  }

  /** The task event a turn starts with (published by `TurnOpening`), and the conversation the model is sent. */
  private openTask(context: TurnRequest): { task: Task; history: Message[] } {
    const { userMessage } = context;
    const task = openingTask(context);
    // An earlier message may have its id (CMD-34).
    const history = context.task?.history ?? [];
    return {
      task,
      history: history.at(-1)?.messageId === userMessage.messageId ? history : [...history, ...task.history],
    };
  }

  /**
   * Streams the reply into one artifact as it arrives. The update that closes the artifact
   * (`lastChunk`) carries the text still waiting at the end, or an empty text part when all
   * of it went out already: holding each piece back until the next one arrives, so that the
   * last piece could always close the artifact, would delay every token by one. A reply with
   * no text has no artifact at all (an artifact needs a part, and there is no output to put
   * in one); its final status message says so. A failed or canceled reply leaves its
   * artifact open: the final status says why it ended.
   */
  private async runModel(
    turn: Turn,
    modelId: string,
    contextId: string,
    history: Message[],
    bus: TurnPublisher,
    calls: TurnToolCalls,
    start: TurnStart,
    written: { text: string },
  ): Promise<{ text: string; stopped?: boolean }> {
    const artifact = { taskId: turn.taskId, contextId, artifactId: randomUUID(), modelId };
    let chunks = 0;
    const publish = (text: string, lastChunk: boolean) => {
      bus.publish(AgentEvent.artifactUpdate(replyChunk(artifact, text, { append: chunks > 0, lastChunk })));
      chunks += 1;
    };
    const text = new CoalescedText((merged) => {
      if (!turn.abort.signal.aborted || turn.abort.signal.reason instanceof TurnStopped) publish(merged, false);
    });
    // A command file's `allowed-tools` (TOOL-3): the model is offered no other tool, and the AI
    // SDK answers a call to one it was not offered with an error result.
    const scope = { taskId: turn.taskId, contextId, metadata: start.metadata, callContext: turn.context };
    const listed = await this.options.tools?.list(turn.abort.signal, scope);
    const offered = allowedEntries(listed?.tools ?? [], start.allowedTools);
    // Servers still connecting past the wait, or unreachable: the user is told the turn goes without them.
    const missing = (listed?.missing ?? []).filter((entry) => mayAllowServer(start.allowedTools, entry.server));
    if (missing.length > 0 && !turn.abort.signal.aborted) {
      const notice = agentMessage(turn.taskId, contextId, missingToolsText(missing), TOOLS_MISSING_NOTICE);
      notice.parts.push(dataPart({ missing }));
      bus.publish(progressNotice(notice));
    }
    const tools = calls.wrap(await grantedEntries(offered, this.options.grants, contextId, turn.context), () =>
      text.flush(),
    );
    const answered = await this.answerWaitingCalls(turn, contextId, history, calls, start.started);
    const before = await start.earlier;
    const sent = before.length > 0 || answered.length > 0 ? [...before, ...history, ...answered] : history;
    const build = (whole: readonly Message[]) =>
      buildConversation({
        // A sub-agent's own prompt takes the harness's place (docs/agents.md).
        systemPrompt: agentRunOf(start.metadata)?.systemPrompt ?? this.options.systemPrompt,
        instructions: this.options.instructions?.(),
        history: whole,
        budgetChars: this.options.contextCharsFor?.(modelId),
      });
    let conversation = build(sent);
    // Past `compact.autoAt` of the budget, the conversation is summarised first; the cut is the last resort.
    const request = { taskId: turn.taskId, contextId, modelId, history: sent, signal: turn.abort.signal };
    const compacted = await this.compactor?.beforeTurn(request, conversation);
    if (compacted && !turn.abort.signal.aborted) {
      for (const message of compacted.publish) bus.publish(progressNotice(message));
      if (compacted.history) conversation = build(compacted.history);
    }
    if (conversation.cut > 0 && !turn.abort.signal.aborted) {
      const notice = agentMessage(turn.taskId, contextId, cutText(conversation.cut), CONTEXT_CUT_NOTICE);
      notice.parts.push(dataPart({ cut: conversation.cut }));
      bus.publish(progressNotice(notice));
    }
    let response: ModelResponse;
    try {
      response = await this.options.gateway.complete({
        modelId,
        system: conversation.system,
        messages: conversation.messages,
        conversationId: contextId,
        abortSignal: turn.abort.signal,
        onText: (delta) => {
          written.text += delta;
          text.push(delta);
        },
        tools,
        maxSteps: this.options.maxSteps,
        onApprovalRequest: (call) => {
          text.flush();
          calls.awaitApproval(call);
        },
        // Said at once, while the AI SDK waits to try again: the turn goes on.
        onRetry: (notice) => {
          text.flush();
          bus.publish(progressNotice(agentMessage(turn.taskId, contextId, notice, RETRYING_NOTICE)));
        },
      });
    } catch (error) {
      text.flush(); // what arrived before a failure goes out before the final status
      if (!(turn.abort.signal.reason instanceof TurnStopped)) throw error;
      // Stopped: the reply so far is the reply, its artifact closed as a finished one is.
      if (chunks > 0) publish('', true);
      return { text: written.text, stopped: true };
    }
    const rest = text.take();
    if (chunks > 0 || rest) publish(rest, true);
    // The reply is whole, stored as it streamed: a store that cannot count its tokens now does not cut it short.
    await this.options.state
      .addUsage(turn.taskId, { model: modelId, inputTokens: response.inputTokens, outputTokens: response.outputTokens })
      .catch((error: unknown) => this.options.onTurnError?.(error, turn.taskId));
    return { text: response.text || '(The model returned no text.)' };
  }

  /** The conversation before the task (CMD-35); a store that cannot say is logged, and the turn goes on with the task alone. */
  private async earlierMessages(taskId: string, contextId: string, context: TurnRequest): Promise<Message[]> {
    try {
      return await this.options.earlier!({ id: taskId, contextId, metadata: context.task?.metadata }, context.context);
    } catch (error) {
      this.options.onTurnError?.(error, taskId);
      return [];
    }
  }

  /**
   * A turn that follows a pause (CMD-33) first carries out the answers to the calls that waited:
   * approved ones run, denied ones end saying so, and those left unanswered are denied by the
   * message that started this turn. Resolves with their final reports, which the model is shown
   * after the rest of the conversation (they are stored after the message too).
   */
  private async answerWaitingCalls(
    turn: Turn,
    contextId: string,
    history: Message[],
    calls: TurnToolCalls,
    started: Message,
  ): Promise<Message[]> {
    const waiting = waitingCalls(history, started.messageId);
    if (!waiting?.length) return [];
    const resumed = started.metadata?.[NOTICE_KEY] === RESUME_NOTICE;
    const unanswered: ApprovalDecision = {
      approved: false,
      reason: resumed ? 'no answer was given.' : 'the user sent a new message instead of answering.',
    };
    const reports: Message[] = [];
    for (const { call, decision } of waiting) {
      const ended = await calls.answer(call, decision ?? unanswered, turn.abort.signal);
      reports.push(toolCallMessage(turn.taskId, contextId, ended));
    }
    return reports;
  }

  /** The turn's final status, for the engine to store; the task and WORKING go out before it. */
  private finish(bus: TurnOpening, state: TaskState, message: Message): TaskStatusUpdateEvent {
    bus.open();
    return statusUpdate(message.taskId!, message.contextId!, state, message);
  }
}

/** A WORKING status update with the harness's words (a notice of `TURN_PROGRESS_NOTICES`): the turn goes on. */
function progressNotice(message: Message) {
  return AgentEvent.statusUpdate(
    statusUpdate(message.taskId!, message.contextId!, TaskState.TASK_STATE_WORKING, message),
  );
}

/** What started a turn: its message, the tools and model it may use (all, the task's when absent), the task's metadata, and the conversation before the task (CMD-35). */
interface TurnStart {
  started: Message;
  allowedTools: string[] | undefined;
  model: string | undefined;
  /** The task's metadata as stored before the turn (a sub-agent's, `AGENT_KEY`). */
  metadata: Record<string, unknown> | undefined;
  earlier: Promise<Message[]>;
}
