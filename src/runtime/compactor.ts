/**
 * CMD-36: compaction, the runtime's half. The task's model summarises the conversation (no
 * tools) through the model gateway, bounded by the model timeout; `/compact` stores the point
 * with its reply, and a turn whose conversation passes `compact.autoAt` of its model's budget
 * compacts first (`beforeTurn`). What to summarise and the point itself are `conversation/compaction.ts`'s.
 */
import { randomUUID } from 'node:crypto';
import type { Message, Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import type { CompactionAttempt, ConversationCompaction } from '../commands/builtins/ports.js';
import type { BuiltConversation, InstructionFile } from '../conversation/build.js';
import {
  compactionMessage,
  conversationMovedOn,
  planCompaction,
  summaryRequestText,
  type CompactionInput,
} from '../conversation/compaction.js';
import { isHarnessError } from '../errors.js';
import { COMPACTED_NOTICE, COMPACTION_FAILED_NOTICE, dataPart } from '../wire.js';
import { agentMessage } from './events.js';
import type { ModelGateway } from './model-gateway.js';
import type { TaskModels } from './task-models.js';
import type { TaskStateStore } from '../ports.js';

/** The `compact` key of the config file. */
export interface CompactSettings {
  /** Whether a turn compacts first when its conversation passes `autoAt` of the budget. */
  auto: boolean;
  autoAt: number;
  tailShare: number;
}

export interface CompactorOptions {
  gateway: ModelGateway;
  /** The task's model, which writes the summary `/compact` asks for. */
  models: Pick<TaskModels, 'modelFor'>;
  /** The conversation before the task (CMD-35), as its turns are sent it; none without it. */
  earlier?: (task: Pick<Task, 'id' | 'contextId' | 'metadata'>, callContext: ServerCallContext) => Promise<Message[]>;
  /** The settings, and the longest the summary request may take (the model timeout). */
  compact: CompactSettings & { timeoutMs: number };
  /** The most characters of conversation a turn sends to the given model (default: no bound). */
  contextCharsFor?: (modelId: string) => number;
  systemPrompt?: string;
  instructions?: () => readonly InstructionFile[];
  /** Where the summary's tokens are counted with the task's usage. */
  state?: Pick<TaskStateStore, 'addUsage'>;
  /** Told about failures the user sees only as a short reason (and a usage that could not be counted). */
  onTurnError?: (error: unknown, taskId: string) => void;
}

/** What to compact: a task's conversation as a turn would send it, and the model that summarises it. */
export interface CompactionRequest {
  taskId: string;
  contextId: string;
  modelId: string;
  history: readonly Message[];
  focus?: string;
  signal?: AbortSignal;
}

/** What a turn publishes before its model request after trying to compact, and the history it then sends. */
export interface TurnCompaction {
  /** The messages to publish as WORKING status updates, in order: the point and its notice, or a failure's notice. */
  publish: Message[];
  /** The history with the compaction point; absent when none was made. */
  history?: Message[];
}

/** Summarises conversations: for `/compact` (its port), and before a turn past its budget's share. */
export class Compactor implements ConversationCompaction {
  constructor(private readonly options: CompactorOptions) {}

  /** `/compact`: the task's model summarises the task's conversation, with what came before the task (CMD-35). */
  async compact(task: Task, { focus, callContext }: { focus?: string; callContext: ServerCallContext }) {
    const { models, earlier } = this.options;
    const [modelId, before] = await Promise.all([
      models.modelFor(task, callContext),
      earlier ? earlier(task, callContext) : [],
    ]);
    const history = before.length > 0 ? [...before, ...task.history] : task.history;
    return this.summarise({ taskId: task.id, contextId: task.contextId, modelId, history, focus });
  }

  movedOn(seen: Task, stored: Task): boolean {
    return conversationMovedOn(seen.history, stored.history);
  }

  /** Summarises the conversation with `modelId`: the point to store, or why there is none. Never throws. */
  async summarise(request: CompactionRequest): Promise<CompactionAttempt> {
    const input = this.input(request);
    const plan = planCompaction(input);
    if (!plan) return { kind: 'nothing' };
    const { gateway } = this.options;
    // The model timeout for each request: a long transcript goes in several (`plan.parts`).
    const timeoutMs = this.options.compact.timeoutMs * plan.parts.length;
    // A timer of our own, cleared once the request settles: the gateway's bound may not cover every path.
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new Error('the summary request timed out')), timeoutMs);
    const abortSignal = request.signal ? AbortSignal.any([request.signal, timeout.signal]) : timeout.signal;
    let summary = '';
    try {
      // Part by part, oldest first, each read with the summary of those before it.
      for (let index = 0; index < plan.parts.length; index += 1) {
        const response = await gateway.complete({
          modelId: request.modelId,
          system: plan.instructions,
          messages: [{ role: 'user', content: summaryRequestText(plan, index, summary) }],
          conversationId: request.contextId,
          abortSignal,
          onText: () => {},
        });
        summary = response.text.trim();
        await this.options.state
          ?.addUsage(request.taskId, {
            model: request.modelId,
            inputTokens: response.inputTokens,
            outputTokens: response.outputTokens,
          })
          .catch((error: unknown) => this.options.onTurnError?.(error, request.taskId));
        if (!summary) break;
      }
    } catch (error) {
      if (timeout.signal.aborted)
        return { kind: 'failed', reason: `${request.modelId} wrote no summary within ${timeoutMs} ms (timed out).` };
      if (isHarnessError(error)) return { kind: 'failed', reason: error.message };
      if (request.signal?.aborted) return { kind: 'failed', reason: 'the request was canceled.' };
      this.options.onTurnError?.(error, request.taskId);
      return { kind: 'failed', reason: `The summary request to ${request.modelId} failed unexpectedly.` };
    } finally {
      clearTimeout(timer);
    }
    if (!summary) return { kind: 'failed', reason: `${request.modelId} returned an empty summary.` };
    const made = { messageId: randomUUID(), taskId: request.taskId, contextId: request.contextId };
    const { message, point } = compactionMessage(input, plan, { ...made, summary, model: request.modelId });
    return { kind: 'compacted', point, message };
  }

  /**
   * Before a turn's model request: when the conversation it would send passes `autoAt` of the
   * model's budget, compacts it. Undefined when there is nothing to do or say.
   */
  async beforeTurn(request: CompactionRequest, built: BuiltConversation): Promise<TurnCompaction | undefined> {
    const { compact: settings } = this.options;
    if (!settings.auto) return undefined;
    const { sizes, cut } = built;
    const sent = sizes.systemPrompt + sizes.instructions + sizes.summary + sizes.history;
    if (cut === 0 && sent <= settings.autoAt * this.budgetOf(request.modelId)) return undefined;
    const made = await this.summarise(request);
    const { taskId, contextId } = request;
    if (made.kind === 'nothing') return undefined;
    if (made.kind === 'failed') {
      const text = `The conversation could not be compacted: ${made.reason}`;
      const notice = agentMessage(taskId, contextId, text, COMPACTION_FAILED_NOTICE);
      notice.parts.push(dataPart({ reason: made.reason }));
      return { publish: [notice] };
    }
    const { charsBefore, charsAfter } = made.point;
    const notice = agentMessage(taskId, contextId, compactedText(charsBefore, charsAfter), COMPACTED_NOTICE);
    notice.parts.push(dataPart({ charsBefore, charsAfter }));
    return { publish: [made.message, notice], history: [...request.history, made.message] };
  }

  private budgetOf(modelId: string): number {
    return this.options.contextCharsFor?.(modelId) ?? Infinity;
  }

  private input(request: CompactionRequest): CompactionInput {
    return {
      systemPrompt: this.options.systemPrompt,
      instructions: this.options.instructions?.(),
      history: request.history,
      budgetChars: this.budgetOf(request.modelId),
      tailShare: this.options.compact.tailShare,
      focus: request.focus,
    };
  }
}

/** "compacted the conversation: 180,000 → 9,000 characters" */
export function compactedText(before: number, after: number): string {
  return `Compacted the conversation: ${before.toLocaleString('en-US')} → ${after.toLocaleString('en-US')} characters (the earlier messages summarised, the latest kept as they were).`;
}
