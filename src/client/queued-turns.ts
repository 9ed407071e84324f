/**
 * Messages typed in the chat while a turn runs, waiting for their own turn, in the order typed.
 * When the running turn's task is known and the agent declares the while-busy extension
 * (spec/while-busy-extension-v1.md), a message goes to the task's queue on the agent at once
 * (`tiny-harness/while-busy: "enqueue"`): it survives leaving the chat, and its stream, kept
 * open, becomes its turn's when the turn before it ends. Otherwise it waits here and is sent
 * when the turn ends, as with an agent that has no queue.
 */
import { type AgentCard, type StreamResponse, type Task } from '@a2a-js/sdk';
import { oneLineOf, type ChatScreen } from './chat-screen.js';
import { describeClientError, userMessage, type Connection } from './connect.js';
import { eventsAfter } from './resume.js';
import {
  GENERATION_KEY,
  isInFlight,
  QUEUED_KEY,
  WHILE_BUSY_EXTENSION_URI,
  WHILE_BUSY_KEY,
  type QueuedNote,
} from '../wire.js';

/** A message queued on the agent: its stream, open since it was queued. */
export interface QueuedOnAgent {
  taskId: string;
  /** Ends the reading of its stream; the message stays queued on the agent. */
  abort: AbortController;
  /** Its turn's events (the queued Task left out); the first one already read when its turn started at once. */
  events: AsyncGenerator<StreamResponse, void, undefined>;
  /** The reply streamed before the chat began to follow the turn (a running task resumed). */
  replySoFar?: string;
}

/** One message waiting for its turn; `typed` when it was typed during a turn (then shown again above its reply). */
export interface Waiting {
  text: string;
  typed: boolean;
  /** Set when it went to the agent's queue; resolves to undefined when the agent refused it (said already). */
  onAgent?: Promise<QueuedOnAgent | undefined>;
}

/** Whether the agent's card declares the while-busy extension. */
export function offersQueue(card: AgentCard): boolean {
  return card.capabilities?.extensions?.some((extension) => extension.uri === WHILE_BUSY_EXTENSION_URI) ?? false;
}

/** The messages waiting for their turn, here or on the agent; what happens to each is said on the screen. */
export class WaitingMessages {
  private readonly waiting: Waiting[] = [];
  /** The last message sent to the agent's queue: the next is sent once it is queued, so the agent keeps their order. */
  private lastSent: Promise<unknown> = Promise.resolve();
  /** Every stream opened for a queued message, so that leaving ends them all. */
  private readonly open = new Set<AbortController>();

  constructor(
    private readonly connection: Connection,
    private readonly screen: ChatScreen,
  ) {}

  /** How many messages wait, here or on the agent's queue. */
  get size(): number {
    return this.waiting.length;
  }

  /** Whether a message waits on the agent's queue. */
  get onAgent(): boolean {
    return this.waiting.some((entry) => entry.onAgent !== undefined);
  }

  /**
   * Queues a message: on the agent's queue when a turn runs on a known task (`running`) and the
   * agent has one, unless one typed before waits here (it would then run after this one); here
   * otherwise, said to be queued when typed during a turn (`busy`).
   */
  add(text: string, busy: boolean, running?: { taskId: string; contextId: string }): void {
    const here = this.waiting.some((entry) => entry.onAgent === undefined);
    if (running?.taskId && offersQueue(this.connection.card) && !here) {
      const onAgent = this.lastSent.then(() => this.enqueue(text, running));
      this.lastSent = onAgent;
      this.waiting.push({ text, typed: true, onAgent });
      return;
    }
    if (busy) this.say(`(queued: ${oneLineOf(text)}; sent when the turn ends)`);
    this.waiting.push({ text, typed: busy });
  }

  /**
   * The turn running on a task the chat resumes (`--task`, a sub-agent's sub-task say), to follow
   * as if sent here, first in line: the reply so far as read, then its events after the task as
   * read (`Last-Event-ID`, when the agent numbers them). Nothing when no turn runs on it.
   */
  followRunning(task: Task, replySoFar?: string): void {
    if (!isInFlight(task.status?.state)) return;
    const abort = new AbortController();
    const { client } = this.connection;
    const generation = task.metadata?.[GENERATION_KEY];
    const events =
      typeof generation === 'number'
        ? eventsAfter(client, task.id, generation, abort.signal)
        : client.resubscribeTask({ tenant: '', id: task.id }, { signal: abort.signal });
    this.waiting.unshift({
      text: '',
      typed: false,
      onAgent: Promise.resolve({ taskId: task.id, abort, events, replySoFar }),
    });
  }

  /** The next message to run, or undefined when none waits. */
  next(): Waiting | undefined {
    return this.waiting.shift();
  }

  /**
   * Empties the list as the chat is left, saying what happens to each: one waiting here is not
   * sent; one on the agent's queue stays there and runs (its stream is closed). Resolves with how
   * many stay on the agent.
   */
  async leave(): Promise<number> {
    const left = this.waiting.splice(0);
    // A message on its way to the agent is queued (or refused) first: what is said of it is then true.
    const queued = await Promise.all(left.map(async (entry) => entry.onAgent && (await entry.onAgent)));
    for (const abort of this.open) abort.abort();
    left.forEach(({ text, onAgent }, i) => {
      if (!onAgent) this.say(`(not sent: ${oneLineOf(text)})`);
      else if (queued[i]) this.say(`(stays queued on the agent: ${oneLineOf(text)})`);
    });
    return queued.filter(Boolean).length;
  }

  /** The line said on leaving when `count` messages stay on task `taskId`'s queue: how to see them. */
  stayNote(count: number, taskId: string): string {
    const see = `npx tiny-harness chat ${this.connection.url} --task ${taskId}, then /status`;
    return this.screen.style.dim(
      count === 1
        ? `(1 message stays queued on the agent and runs in turn; to see it: ${see})`
        : `(${count} messages stay queued on the agent and run in turn; to see them: ${see})`,
    );
  }

  private say(line: string): void {
    this.screen.line(this.screen.style.dim(line));
  }

  private async enqueue(text: string, ids: { taskId: string; contextId: string }): Promise<QueuedOnAgent | undefined> {
    const message = userMessage(text, ids);
    message.metadata = { [WHILE_BUSY_KEY]: 'enqueue' };
    const abort = new AbortController();
    this.open.add(abort);
    const stream = this.connection.client.sendMessageStream(
      { tenant: '', message, configuration: undefined, metadata: {} },
      { signal: abort.signal },
    );
    let first: IteratorResult<StreamResponse, void>;
    try {
      first = await stream.next();
    } catch (error) {
      this.open.delete(abort);
      if (abort.signal.aborted) return undefined;
      // Refused (`queue_full`, say): the text is given back, so that it is not lost.
      this.screen.line(this.screen.style.error(`error: ${describeClientError(error, this.connection.url)}`));
      this.say(`(not queued; your message, to send again:)\n${text}`);
      return undefined;
    }
    const note = queuedNoteOf(first.done ? undefined : first.value);
    if (note) this.say(`(queued on the agent, #${note.position}: ${oneLineOf(text)}; runs when the turn ends)`);
    const open = this.open;
    // The queued Task only says where it waits; a turn that started at once begins with its first event.
    async function* events(): AsyncGenerator<StreamResponse, void, undefined> {
      try {
        if (!first.done && !note) yield first.value;
        yield* stream;
      } finally {
        open.delete(abort);
      }
    }
    return { taskId: ids.taskId, abort, events: events() };
  }
}

/** The `tiny-harness/queued` note on the Task a queued message's stream begins with. */
function queuedNoteOf(event: StreamResponse | undefined): QueuedNote | undefined {
  if (event?.payload?.$case !== 'task') return undefined;
  const note = event.payload.value.metadata?.[QUEUED_KEY] as Partial<QueuedNote> | undefined;
  return typeof note?.position === 'number' ? (note as QueuedNote) : undefined;
}
