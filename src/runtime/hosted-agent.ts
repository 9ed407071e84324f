import { TaskState, type Message, type Part, type Task, type TaskStatusUpdateEvent } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultExecutionEventBus,
  RequestContext,
  type AgentExecutionEvent,
  type AgentExecutor,
} from '@a2a-js/sdk/server';
import { MESSAGE_REPLY_KEY, subtaskParentOf } from '../wire.js';
import { agentMessage, statusUpdate } from './events.js';
import type { TurnRequest, TurnResult } from './executor.js';
import { openingTask, type TurnPublisher } from './turn/turn-opening.js';
import { conversationEnd, type TurnOutcome } from './turn/turn-end.js';
import { TurnFenced, TurnInterrupted, TurnStopped, TurnUnwritten } from './turn/turns.js';
import type { Turn } from '../engine-ports.js';
import { isFinalStatus } from './turn/turn-stream.js';

/** The notice a hosted agent's failed turn carries (`NOTICE_KEY`): the harness's words, not the agent's. */
export const AGENT_FAILURE_NOTICE = 'agent-failure';

/** What `/status` names as a hosted agent's model: none, the agent runs the turns. */
export const HOSTED_AGENT_MODELS = {
  modelFor: () => Promise.resolve('none (an AgentExecutor runs the turns)'),
};

export interface HostedAgentOptions {
  agent: AgentExecutor;
  /** How long a turn may run before it is ended (`modelTimeoutMs`): the agent takes the model's place. */
  timeoutMs: number;
  /** The state a turn the agent answered with a message (not a task status) ends in. */
  endState: TaskState;
  /** Told about an agent that threw, or whose `cancelTask` failed. */
  onTurnError?: (error: unknown, taskId: string) => void;
}

/** How a hosted turn came to its end, before it is told as the task's final status. */
type Ending =
  | { kind: 'final'; update: TaskStatusUpdateEvent }
  | { kind: 'refused'; rule: string }
  | { kind: 'failed'; text: string }
  | { kind: 'aborted' };

/**
 * Runs turns with an `AgentExecutor` of `@a2a-js/sdk` in the model loop's place (docs/embedding.md):
 * the agent gets the SDK's `RequestContext` and a bus whose events go to the engine's one writer,
 * each checked against A2A 1.0 first. A forbidden event ends the turn FAILED naming the rule; a
 * cancel, `/stop`, a drain or the timeout reach the agent's `cancelTask`. Never throws.
 */
export class HostedAgent {
  constructor(private readonly options: HostedAgentOptions) {}

  async run(request: TurnRequest, turn: Turn, publisher: TurnPublisher): Promise<TurnResult> {
    const { taskId, contextId, userMessage } = request;
    const { agent, timeoutMs } = this.options;
    // The turn's stream starts at its task event: the harness opens it, as the model loop does.
    publisher.publish(AgentEvent.task(openingTask(request)));
    const bus = new DefaultExecutionEventBus();
    let end!: (ending: Ending) => void;
    const ended = new Promise<Ending>((resolve) => (end = resolve));
    let open = true;
    const finish = (ending: Ending) => {
      if (!open) return;
      open = false;
      end(ending);
    };
    const gate = new EventGate(taskId, contextId, this.options.endState);
    bus.on('event', (event) => {
      if (!open) return;
      const checked = gate.check(event);
      if ('rule' in checked) return finish({ kind: 'refused', rule: checked.rule });
      for (const accepted of checked.publish) publisher.publish(accepted);
      if (checked.final) finish({ kind: 'final', update: checked.final });
    });
    bus.on('finished', () => finish(noFinalStatus()));
    const onAbort = () => finish({ kind: 'aborted' });
    turn.abort.signal.addEventListener('abort', onAbort, { once: true });
    if (turn.abort.signal.aborted) onAbort();
    const timer = setTimeout(
      () =>
        finish({
          kind: 'failed',
          text: `The agent did not end its turn within modelTimeoutMs (${timeoutMs} ms), so it was ended.`,
        }),
      timeoutMs,
    );
    // The SDK appends the message to the stored task's history before `execute` runs: so does the harness.
    const stored = request.task && { ...request.task, history: [...(request.task.history ?? []), userMessage] };
    const sent = { tenant: request.context.tenant ?? '', message: userMessage, configuration: undefined, metadata: {} };
    const context = new RequestContext(sent, taskId, contextId, request.context, stored);
    void Promise.resolve()
      .then(() => agent.execute(context, bus))
      .then(
        () => finish(noFinalStatus()),
        (error: unknown) => {
          this.options.onTurnError?.(error, taskId);
          finish({ kind: 'failed', text: "The agent failed: its execute() threw (the server's log says more)." });
        },
      );
    const ending = await ended;
    clearTimeout(timer);
    turn.abort.signal.removeEventListener('abort', onAbort);
    // Anything but a final status of its own leaves the agent maybe still working: it is asked to stop.
    if (ending.kind !== 'final') this.cancelAgent(taskId);
    const final = this.finalStatus(ending, turn, taskId, contextId);
    // A sub-task's parent (a command file run as one) is told how it ended, as after a model's turn.
    const metadata = request.task?.metadata;
    if (!final || subtaskParentOf(metadata) === undefined) return { final };
    const text = (final.status?.message?.parts ?? []).map((part) => textOf(part)).join('');
    return {
      final,
      told: { task: { id: taskId, metadata }, state: final.status!.state, text, context: request.context },
    };
  }

  /** The agent's `cancelTask`, on a bus nobody reads any more: the harness stores the turn's end itself. */
  private cancelAgent(taskId: string): void {
    void Promise.resolve()
      .then(() => this.options.agent.cancelTask(taskId, new DefaultExecutionEventBus()))
      .catch((error: unknown) => this.options.onTurnError?.(error, taskId));
  }

  private finalStatus(
    ending: Ending,
    turn: Turn,
    taskId: string,
    contextId: string,
  ): TaskStatusUpdateEvent | undefined {
    const failed = (text: string) =>
      statusUpdate(
        taskId,
        contextId,
        TaskState.TASK_STATE_FAILED,
        agentMessage(taskId, contextId, text, AGENT_FAILURE_NOTICE),
      );
    switch (ending.kind) {
      case 'final':
        return ending.update;
      case 'refused':
        return failed(`The agent published an event A2A 1.0 forbids, so its turn was ended: ${ending.rule}`);
      case 'failed':
        return failed(ending.text);
      case 'aborted': {
        const reason: unknown = turn.abort.signal.reason;
        // Fenced: the task is another instance's now; nothing more of this turn is stored.
        if (reason instanceof TurnFenced) return undefined;
        const outcome: TurnOutcome =
          reason instanceof TurnStopped
            ? { kind: 'stopped', text: '', model: '' }
            : reason instanceof TurnInterrupted
              ? { kind: 'interrupted' }
              : reason instanceof TurnUnwritten
                ? { kind: 'store-failure', text: '', model: '' }
                : { kind: 'canceled' };
        const { state, text, notice } = conversationEnd(outcome, this.options.endState);
        return statusUpdate(taskId, contextId, state, agentMessage(taskId, contextId, text, notice));
      }
    }
  }
}

function textOf(part: Part): string {
  return part.content?.$case === 'text' ? part.content.value : '';
}

/** `execute` returned, or the bus was finished, before a final status: A2A 1.0 leaves a task no such end. */
function noFinalStatus(): Ending {
  return {
    kind: 'failed',
    text: "The agent's turn ended without a final status: under A2A 1.0 a turn ends in a terminal state, INPUT_REQUIRED or AUTH_REQUIRED, or with a message.",
  };
}

/** The states an agent may publish: every state A2A 1.0 names, none unknown. */
const KNOWN_STATES: ReadonlySet<unknown> = new Set(
  Object.values(TaskState).filter((state) => typeof state === 'number' && state > TaskState.TASK_STATE_UNSPECIFIED),
);

/**
 * What A2A 1.0 allows a turn's events, checked one at a time: each names the turn's task and
 * context, a task is published at most once, every state is one the protocol names, and every
 * artifact holds a part. Accepted events are given back as the engine stores them: the agent's
 * task event becomes the status and artifacts it carries (the harness published the task
 * already), and a message reply becomes the turn's final status.
 */
class EventGate {
  private taskSeen = false;

  constructor(
    private readonly taskId: string,
    private readonly contextId: string,
    private readonly endState: TaskState,
  ) {}

  check(
    event: AgentExecutionEvent,
  ): { rule: string } | { publish: AgentExecutionEvent[]; final?: TaskStatusUpdateEvent } {
    switch (event.kind) {
      case 'task':
        return this.task(event.data);
      case 'message': {
        const message = this.ownMessage(event.data);
        if ('rule' in message) return message;
        // A2A's message response: the turn's end holds it, and a blocking send answers with it.
        const final = statusUpdate(this.taskId, this.contextId, this.endState, message);
        return { publish: [], final: { ...final, metadata: { [MESSAGE_REPLY_KEY]: true } } };
      }
      case 'statusUpdate': {
        const { data } = event;
        const named = this.names(data.taskId, data.contextId);
        if (named) return named;
        if (!KNOWN_STATES.has(data.status?.state))
          return { rule: 'a task status names one of the states A2A 1.0 defines; this one named an unknown state.' };
        const message = data.status?.message && this.ownMessage(data.status.message);
        if (message && 'rule' in message) return message;
        const update: TaskStatusUpdateEvent = {
          ...data,
          metadata: data.metadata ?? {},
          status: { ...data.status!, message },
        };
        const accepted = AgentEvent.statusUpdate(update);
        return isFinalStatus(accepted) ? { publish: [], final: update } : { publish: [accepted] };
      }
      case 'artifactUpdate': {
        const { data } = event;
        const named = this.names(data.taskId, data.contextId);
        if (named) return named;
        if (!data.artifact?.parts?.length) return { rule: 'an artifact holds at least one part (Artifact.parts).' };
        return { publish: [AgentEvent.artifactUpdate({ ...data, metadata: data.metadata ?? {} })] };
      }
      default:
        return {
          rule: 'an agent publishes a task, a message, a status update or an artifact update; this event was none.',
        };
    }
  }

  private task(task: Task): ReturnType<EventGate['check']> {
    if (this.taskSeen) return { rule: 'a turn publishes its task once; the agent published a second task.' };
    this.taskSeen = true;
    const named = this.names(task.id, task.contextId);
    if (named) return named;
    const events: AgentExecutionEvent[] = [];
    const state = task.status?.state;
    if (state !== undefined && state !== TaskState.TASK_STATE_SUBMITTED) {
      const checked = this.check(
        AgentEvent.statusUpdate({ taskId: task.id, contextId: task.contextId, status: task.status!, metadata: {} }),
      );
      if ('rule' in checked) return checked;
      if (checked.final) return { publish: events, final: checked.final };
      events.push(...checked.publish);
    }
    for (const artifact of task.artifacts ?? []) {
      const checked = this.check(
        AgentEvent.artifactUpdate({
          taskId: task.id,
          contextId: task.contextId,
          artifact,
          append: false,
          lastChunk: true,
          metadata: {},
        }),
      );
      if ('rule' in checked) return checked;
      events.push(...checked.publish);
    }
    return { publish: events };
  }

  /** The message with the turn's ids filled in, or the rule it breaks by naming another task. */
  private ownMessage(message: Message): Message | { rule: string } {
    const named = this.names(message.taskId || this.taskId, message.contextId || this.contextId);
    return named ?? { ...message, taskId: this.taskId, contextId: this.contextId };
  }

  private names(taskId: string | undefined, contextId: string | undefined): { rule: string } | undefined {
    if (taskId !== this.taskId)
      return { rule: "an agent's events name the task of the turn; this one named another task's id." };
    if (contextId !== this.contextId)
      return { rule: "an agent's events name the context of the turn's task; this one named another context." };
    return undefined;
  }
}
