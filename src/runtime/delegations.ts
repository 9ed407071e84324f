/**
 * The `delegate` tool's work (docs/agents.md): a sub-task started as `/spawn` starts one, run as
 * an agent (its model, tools and system prompt), and followed to its end through the task's
 * change feed, so that it ends the same whichever instance runs or answers its turns. Its final
 * reply is the call's output; a call aborted (its turn stopped or canceled) cancels it.
 */
import { TaskState, type Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { CommandUsageError } from '../commands/index.js';
import { hasErrorCode, isHarnessError } from '../errors.js';
import { splitOutput } from '../tools/output.js';
import type { ToolOutcome, ToolTurn } from '../tools/index.js';
import { isTerminal, textOf } from '../wire.js';
import { agentRunOf } from './agent-run.js';
import type { DelegatedAgent, Delegator, SubtaskStarter } from '../engine-ports.js';
import type { LogSubscription, TaskSnapshot } from '../ports.js';

export interface DelegationsOptions {
  starter: SubtaskStarter;
  /** Where the sub-task is read as stored, and its events followed as they are committed, by any instance. */
  tasks: {
    read(taskId: string, context: ServerCallContext): Promise<TaskSnapshot | undefined>;
    feeds: { follow(taskId: string): Promise<LogSubscription> };
  };
  /** What cancels the sub-task of an aborted call, wherever its turn runs (CMD-31). */
  cancel(taskId: string, context: ServerCallContext): Promise<void>;
  /** What the model is given of a long reply (`toolOutputChars`); the parent keeps the whole as an artifact. */
  outputChars: number;
  /** How deep sub-agents may nest (`agents.maxDepth`): a conversation's are at depth 1. */
  maxDepth: number;
  onError?: (error: unknown, what: string, taskId?: string) => void;
}

/** How a followed sub-task ended: its final state and message, or why it was not followed to its end. */
type SubtaskEnd = { state: TaskState; text: string } | { aborted: true } | { lost: string };

export class Delegations implements Delegator {
  constructor(private readonly options: DelegationsOptions) {}

  mayDelegate(turn: Pick<ToolTurn, 'metadata'>): boolean {
    const run = agentRunOf(turn.metadata);
    return run ? run.mayDelegate && run.depth < this.options.maxDepth : this.options.maxDepth >= 1;
  }

  async delegate(turn: ToolTurn, agent: DelegatedAgent, prompt: string, signal: AbortSignal): Promise<ToolOutcome> {
    const { callContext } = turn;
    if (!callContext) return { status: 'failed', output: 'This turn cannot start sub-agents.' };
    if (signal.aborted) return canceled(agent.name);
    // Offered only within the limits; asked again, since the model may call what it was not offered.
    if (!this.mayDelegate(turn))
      return {
        status: 'failed',
        output: 'This agent may not delegate: it is at the depth limit, or its tools do not list delegate.',
      };
    let id: string;
    try {
      id = await this.options.starter.start(parentOf(turn), prompt, {
        callContext,
        model: agent.model,
        label: `agent ${agent.name}`,
        allowedTools: agent.tools,
        // A sub-agent starts afresh, as Claude Code's do: it reads only its prompt.
        context: 'none',
        agent: {
          name: agent.name,
          depth: (agentRunOf(turn.metadata)?.depth ?? 0) + 1,
          systemPrompt: agent.prompt,
          mayDelegate: agent.mayDelegate,
        },
      });
    } catch (error) {
      // A model not offered, or the server at its limit of turns: said to the model, which may go on without.
      if (isHarnessError(error) || error instanceof CommandUsageError)
        return { status: 'failed', output: `The sub-agent ${agent.name} was not started: ${error.message}` };
      this.options.onError?.(error, 'starting a sub-agent', turn.taskId);
      return { status: 'failed', output: `The sub-agent ${agent.name} could not be started.` };
    }
    const end = await this.waitForEnd(id, callContext, signal);
    if ('aborted' in end) {
      await this.options.cancel(id, callContext).catch((error: unknown) => {
        // Ended on its own meanwhile, or canceled by the parent's cascade already: the expected race.
        if (!hasErrorCode(error, 'task_not_cancelable') && !hasErrorCode(error, 'task_not_found'))
          this.options.onError?.(error, "canceling a sub-agent's sub-task", id);
      });
      return canceled(agent.name, id);
    }
    if ('lost' in end) return { status: 'failed', output: end.lost };
    switch (end.state) {
      case TaskState.TASK_STATE_COMPLETED:
        return { status: 'succeeded', ...splitOutput(end.text, this.options.outputChars) };
      case TaskState.TASK_STATE_CANCELED:
        return { status: 'failed', output: `The sub-agent ${agent.name} (sub-task ${id}) was canceled.` };
      default:
        return { status: 'failed', output: `The sub-agent ${agent.name} (sub-task ${id}) failed: ${end.text}` };
    }
  }

  /**
   * Follows the sub-task until it ends: following begins before it is read, and its events after
   * the generation read are looked at, so that an end written by any instance meanwhile is seen.
   * A pause for approval (CMD-33) is waited through: the sub-task goes on once answered.
   */
  private async waitForEnd(id: string, context: ServerCallContext, signal: AbortSignal): Promise<SubtaskEnd> {
    const lost = { lost: `The sub-task ${id} was started but could not be followed to its end; read it as a task.` };
    let subscription: LogSubscription;
    try {
      subscription = await this.options.tasks.feeds.follow(id);
    } catch (error) {
      this.options.onError?.(error, "following a sub-agent's sub-task", id);
      return lost;
    }
    const stop = () => subscription.close();
    signal.addEventListener('abort', stop, { once: true });
    try {
      const snapshot = await this.options.tasks.read(id, context);
      if (!snapshot) return lost;
      const status = snapshot.task.status;
      if (isTerminal(status?.state)) return { state: status!.state, text: textOf(status?.message?.parts) };
      for (;;) {
        if (signal.aborted) return { aborted: true };
        const entry = await subscription.next();
        if (!entry) return signal.aborted ? { aborted: true } : lost;
        const { event } = entry;
        if (entry.generation <= snapshot.generation || event.kind !== 'statusUpdate') continue;
        const { state, message } = event.data.status ?? {};
        if (isTerminal(state)) return { state: state!, text: textOf(message?.parts) };
      }
    } catch (error) {
      this.options.onError?.(error, "following a sub-agent's sub-task", id);
      return lost;
    } finally {
      signal.removeEventListener('abort', stop);
      subscription.close();
    }
  }
}

function canceled(name: string, id?: string): ToolOutcome {
  const which = id ? ` (sub-task ${id})` : '';
  return { status: 'canceled', output: `The sub-agent ${name}${which} was canceled before it ended.` };
}

/** The turn's task, as a sub-task's start reads its parent: its id, context and metadata. */
function parentOf(turn: ToolTurn): Task {
  return {
    id: turn.taskId,
    contextId: turn.contextId,
    status: undefined,
    history: [],
    artifacts: [],
    metadata: turn.metadata ?? {},
  };
}
