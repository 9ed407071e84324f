import { TaskState, type Message, type Task } from '@a2a-js/sdk';
import type { AgentExecutionEvent, ExecutionEventBus } from '@a2a-js/sdk/server';

/** What a turn publishes its events through. */
export type TurnPublisher = Pick<ExecutionEventBus, 'publish'>;

/**
 * A turn's opening events (the task, then WORKING), published a moment after the turn starts,
 * so that the model request goes out first. Building the request and handing it to the socket
 * (the provider's `fetch` included) runs in promise jobs, as long as the store answers without
 * waiting on I/O (SQLite); storing and sending the opening events ahead of it delayed the request
 * by what they cost, about 1 ms of the first token (bench/RESULTS.md, round 2). `setImmediate`
 * runs once those jobs are done. Whatever the turn publishes before then (a failure found at
 * once, the first text) flushes the opening first, so the order on the bus never changes: the
 * task event first, then WORKING, then the rest.
 */
export class TurnOpening implements TurnPublisher {
  private pending: AgentExecutionEvent[] | undefined;

  constructor(
    private readonly bus: TurnPublisher,
    opening: AgentExecutionEvent[],
  ) {
    this.pending = opening;
    setImmediate(() => this.open());
  }

  publish(event: AgentExecutionEvent): void {
    this.open();
    this.bus.publish(event);
  }

  /** Publishes the opening events now, unless they went out already. */
  open(): void {
    const pending = this.pending;
    if (!pending) return;
    this.pending = undefined;
    for (const event of pending) this.bus.publish(event);
  }
}

/**
 * The task event a turn starts with, whoever runs it (the model loop, a hosted agent). A
 * continued task is republished without artifacts and with only the new messages as its
 * history: the store keeps the rest (`applyEvent`), and a snapshot's copies would overwrite
 * newer ones.
 */
export function openingTask(request: {
  taskId: string;
  contextId: string;
  userMessage: Message;
  opening?: Message[];
  task: Task | undefined;
}): Task {
  const status = { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() };
  const history = [...(request.opening ?? []), request.userMessage];
  return request.task
    ? { ...request.task, history, artifacts: [], metadata: {}, status }
    : { id: request.taskId, contextId: request.contextId, status, history, artifacts: [], metadata: {} };
}
