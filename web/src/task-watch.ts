/**
 * Following the open task while it is idle, as long as one of its sub-tasks runs: the note with
 * a sub-task's result is a status update of the parent written outside any turn, so no stream
 * of a turn carries it. A `SubscribeToTask` ends at the first event that leaves the task waiting
 * for input (a note is one), so the watch subscribes again after each, from the last generation
 * seen (`Last-Event-ID`): nothing is missed between two subscriptions, nothing shown twice.
 * One stream at most, and only while no turn streams here (the page stops it before sending).
 */
import type { StreamResponse } from '@a2a-js/sdk';
import { RESUMED_AFTER_KEY } from '../../src/wire.js';
import type { ChatEvent, Conversation } from './chat.js';
import { readStatusMessage } from './events.js';
import { isUnreachable, pause, retryDelay } from './reachability.js';
import { TurnView, type Transcript } from './render.js';

/**
 * The current task's events while any of its sub-tasks runs, until `signal` aborts, the task
 * ends, or every sub-task has ended. A subscription that fails because the harness cannot be
 * reached is tried again with backoff (`onRetry` says when); any other failure is thrown.
 */
export async function* followWhileSubtasksRun(
  conversation: Conversation,
  signal: AbortSignal,
  onRetry: (error: unknown, delayMs: number) => void = () => {},
): AsyncGenerator<ChatEvent, void, undefined> {
  let failures = 0;
  /** The last subscription moved the generation seen on: the next one starts after it. */
  let moved = true;
  while (!signal.aborted && conversation.taskId && conversation.subtasksRunning.size > 0) {
    // Each subscription is closed as soon as it is no longer needed, not left to the server.
    const round = new AbortController();
    const stop = () => round.abort();
    signal.addEventListener('abort', stop, { once: true });
    let events = 0;
    try {
      const before = conversation.generation;
      // A command's reply carries no generation (its metadata is exactly the extension's, CMD-4):
      // a subscription that ended on one leaves the generation before it, and the same one would
      // replay it again, for ever. A plain subscription instead: the notes in the task's history,
      // then the task's generation.
      const after = moved ? before : undefined;
      for await (const event of conversation.read(skipSeen(conversation.subscribe(after, round.signal)))) {
        events++;
        failures = 0;
        yield event;
        // Done with it: the rest of this event's items still come, then the subscription closes.
        if (conversation.subtasksRunning.size === 0 || !conversation.taskId) round.abort();
      }
      moved = conversation.generation !== before;
      // A subscription that ends with nothing in it is waited out like a failure, never spun on.
      if (events === 0) await pause(retryDelay(failures++), signal);
    } catch (error) {
      if (signal.aborted) return;
      if (round.signal.aborted) continue;
      if (!isUnreachable(error)) throw error;
      const delay = retryDelay(failures++);
      onRetry(error, delay);
      await pause(delay, signal);
    } finally {
      signal.removeEventListener('abort', stop);
      round.abort();
    }
  }
}

/**
 * A subscription's events. Its opening Task is old news when a replay follows it; when none
 * does (no generation was known, or the log no longer holds what was missed), the notes in its
 * history may be what this page missed, and are yielded as the status updates they were (the
 * transcript shows each message once).
 */
async function* skipSeen(stream: AsyncIterable<StreamResponse>): AsyncGenerator<StreamResponse> {
  for await (const event of stream) {
    const p = event.payload;
    if (p?.$case === 'task' && p.value.metadata?.[RESUMED_AFTER_KEY] !== undefined) continue;
    if (p?.$case === 'task') {
      const task = p.value;
      for (const message of task.history) {
        if (!readStatusMessage(message, undefined).some((e) => e.kind === 'note')) continue;
        const status = { state: task.status!.state, message, timestamp: undefined };
        yield {
          payload: {
            $case: 'statusUpdate',
            value: { taskId: task.id, contextId: task.contextId, status, metadata: {} },
          },
        };
      }
    }
    yield event;
  }
}

/** Starts and stops the watch for the page, drawing what it reads into the transcript. */
export class SubtaskWatch {
  private controller: AbortController | undefined;

  constructor(
    private readonly conversation: Conversation,
    private readonly transcript: Transcript,
    private readonly onEvent: () => void,
    private readonly onRetry: (error: unknown, delayMs: number) => void,
    private readonly onFailure: (error: unknown) => void,
  ) {}

  /** Follows the task if a sub-task of it runs and nothing follows it yet. */
  start(): void {
    if (this.controller || !this.conversation.taskId || this.conversation.subtasksRunning.size === 0) return;
    const controller = new AbortController();
    this.controller = controller;
    void this.run(controller);
  }

  /** Stops following (a turn starts here, or another conversation opens). */
  stop(): void {
    this.controller?.abort();
    this.controller = undefined;
  }

  private async run(controller: AbortController): Promise<void> {
    const view = new TurnView(this.transcript, false);
    try {
      for await (const event of followWhileSubtasksRun(this.conversation, controller.signal, this.onRetry)) {
        view.handle(event);
        this.onEvent();
      }
    } catch (error) {
      if (!controller.signal.aborted) this.onFailure(error);
    } finally {
      view.done();
      if (this.controller === controller) this.controller = undefined;
    }
  }
}
