/**
 * The page's streams of turns: a message sent and its reply drawn as it streams, a message sent
 * while a turn runs into the task's queue on the agent (spec/while-busy-extension-v1.md), and
 * the rest of a turn that was running when the page loaded. Keeps what the Stop button and the
 * stored conversation need: whether a turn runs, the reply artifact streaming, the messages
 * still queued.
 */
import { TaskState, type Part } from '@a2a-js/sdk';
import { isTerminal, WHILE_BUSY_KEY } from '../../src/wire.js';
import { newId, type ChatEvent, type Conversation } from './chat.js';
import { retryWhileUnreachable } from './reachability.js';
import { oneLine, TurnView, type Transcript } from './render.js';
import type { QueuedMessage } from './stored.js';

/**
 * A browser opens at most six connections to one host, and each stream holds one: this many
 * queued messages hold a stream while they wait, leaving room for the running turn, /stop and
 * the rest. One more is put in the queue at once without a stream (`Conversation.place`), and
 * its stream opens (sent again, with its id) once one of those has started its turn.
 */
const WAITING_STREAMS = 2;

/** What the turns need of the page around them. */
export interface TurnsPage {
  /** The turn started or ended, an event came: the Stop button and the task line are drawn again. */
  redraw(): void;
  /** Keeps the conversation for a reload: the reply artifact streaming and the queued messages changed. */
  save(): void;
  /** Shows a one-line error, or hides the line. */
  error(message: string | undefined): void;
  /** The harness answered: a "cannot be reached" line goes. */
  reached(): void;
  /** The harness cannot be reached: it is tried again after `delayMs`. */
  unreachable(error: unknown, delayMs: number): void;
  /** A message that was not sent goes back into the input, unless something else is typed there. */
  giveBack(text: string): void;
  /** Following the task while idle (its sub-tasks' notes): stopped while a turn streams here. */
  idleWatch: { start(): void; stop(): void };
}

/** A message typed while the conversation's first reply has not yet named its task. */
interface Waiting {
  text: string;
  bubble: HTMLElement;
}

export class Turns {
  /** The artifact of the reply streaming now: a reload mid-turn shows it whole from the task (issue 24). */
  replyArtifact: string | undefined;
  /** Streams open here (turns, commands, queued messages). */
  private streams = 0;
  /** The streams whose turn runs now (each stream's own token). */
  private readonly running = new Set<object>();
  /** Messages in the task's queue on the agent whose turn has not started, by id, with their bubbles. */
  private readonly queued = new Map<string, Waiting>();
  /** Typed before the first reply named the task (nothing to queue on yet): sent to its queue once it does. */
  private readonly waitingForTask: Waiting[] = [];
  /** Aborts the streams of queued messages when the page leaves the conversation (the messages stay queued). */
  private scope = new AbortController();
  /** The queued messages holding a stream while they wait. */
  private waitingStreams = new Slots(WAITING_STREAMS);

  constructor(
    private readonly conversation: Conversation,
    private readonly transcript: Transcript,
    private readonly page: TurnsPage,
  ) {}

  /** A turn of the task runs (its stream is open here). */
  get turnRunning(): boolean {
    return this.running.size > 0;
  }

  /** Something streams here, or a turn runs. */
  get busy(): boolean {
    return this.streams > 0 || this.running.size > 0;
  }

  /** The queued messages whose turn has not started, in the order sent: kept with the stored conversation. */
  get queuedMessages(): QueuedMessage[] {
    return [...this.queued].map(([messageId, { text }]) => ({ messageId, text }));
  }

  /** Sends `text` now and draws what comes back; one that could not be sent goes back into the input. */
  send(text: string, isCommand: boolean, parts?: Part[]): Promise<void> {
    return this.deliver(text, this.transcript.user(text), isCommand, undefined, parts);
  }

  /** A message typed while a turn runs: into the task's queue on the agent, or, before there is a task, held here. */
  queue(text: string): void {
    const bubble = this.transcript.user(text, true);
    if (this.conversation.taskId) this.enqueue(text, bubble, newId());
    else this.waitingForTask.push({ text, bubble });
  }

  /**
   * Queued messages kept across a reload: those not in the task's history (`ran`) are drawn as
   * queued and sent again with their ids, which gives the stream of their place; the rest ran.
   * With no task to go on (it has ended), their texts go back into the input.
   */
  resume(stored: QueuedMessage[], ran: Set<string>): void {
    const left = stored.filter((q) => !ran.has(q.messageId));
    if (!this.conversation.taskId) {
      if (left.length > 0) this.page.giveBack(left.map((q) => q.text).join('\n'));
      return;
    }
    for (const { messageId, text } of left) this.enqueue(text, this.transcript.user(text, true), messageId);
  }

  /**
   * The page leaves the conversation (New chat, another opened): the queued messages' streams
   * close, the messages stay in their task's queue and run there. Returns the texts held here
   * for want of a task, which nothing has sent.
   */
  leave(): string[] {
    this.scope.abort();
    this.scope = new AbortController();
    this.waitingStreams = new Slots(WAITING_STREAMS);
    this.queued.clear();
    return this.waitingForTask.splice(0).map((w) => w.text);
  }

  /** The rest of a turn that was running when the page loaded, drawn as it comes. */
  async follow(reply?: { artifactId: string; text: string }): Promise<void> {
    this.page.idleWatch.stop();
    const view = new TurnView(this.transcript, false);
    const token = {};
    this.running.add(token);
    this.page.redraw();
    // The reply so far, as the task holds it; the events after the task's generation add the rest.
    const shown = new Map<string, string>();
    if (reply) {
      view.handle({ kind: 'chunk', artifactId: reply.artifactId, text: reply.text, append: false });
      shown.set(reply.artifactId, reply.text);
    }
    try {
      for await (const event of this.conversation.follow(shown)) {
        if (event.kind === 'chunk') this.replyArtifact = event.artifactId;
        view.handle(event);
        this.page.redraw();
      }
    } catch (error) {
      this.page.error(oneLine(error));
    } finally {
      view.done();
      this.running.delete(token);
      this.replyArtifact = undefined;
      this.ended();
    }
  }

  private enqueue(text: string, bubble: HTMLElement, messageId: string): void {
    this.queued.set(messageId, { text, bubble });
    this.page.save();
    void this.deliver(text, bubble, false, messageId);
  }

  /**
   * Sends one message and draws what comes back. `queuedId`: the message goes to the task's
   * queue with that id; its bubble stays queued, and nothing is drawn for it, until its turn starts.
   */
  private async deliver(
    text: string,
    bubble: HTMLElement,
    isCommand: boolean,
    queuedId?: string,
    parts?: Part[],
  ): Promise<void> {
    this.page.idleWatch.stop();
    // A queued message's reply is drawn once its turn starts, under it.
    let view = queuedId ? undefined : new TurnView(this.transcript, !isCommand);
    const token = {};
    this.streams++;
    document.body.dataset['streaming'] = 'true';
    // An ordinary message runs a turn; so may a command (/approve resumes one): the stream says.
    if (!isCommand && !queuedId) this.running.add(token);
    this.page.redraw();
    const signal = queuedId ? this.scope.signal : undefined;
    const metadata = queuedId ? { [WHILE_BUSY_KEY]: 'enqueue' } : undefined;
    const messageId = queuedId ?? newId();
    const slots = this.waitingStreams;
    let holdsSlot = false;
    let answered = false;
    /** The task ended before the queued message's turn: the agent dropped its queue. */
    let taskEnded = false;
    const receive = async (events: AsyncIterable<ChatEvent>): Promise<void> => {
      for await (const event of events) {
        if (!answered) bubble.classList.remove('retrying');
        answered = true;
        this.page.reached();
        if (event.kind === 'queued') bubble.title = `Queued: ${ordinal(event.position)} in line`;
        if (event.kind === 'started') {
          if (holdsSlot) slots.give();
          holdsSlot = false;
          view = this.started(messageId, bubble);
          this.running.add(token);
        }
        this.sendWaiting();
        if (!view) {
          taskEnded ||= event.kind === 'state' && isTerminal(event.state);
          continue;
        }
        view.handle(event);
        if (event.kind === 'chunk' && this.replyArtifact !== event.artifactId) {
          this.replyArtifact = event.artifactId;
          this.page.save();
        }
        if (event.kind === 'state') {
          if (event.state === TaskState.TASK_STATE_WORKING) this.running.add(token);
          else if (event.state !== TaskState.TASK_STATE_SUBMITTED) this.running.delete(token);
        }
        this.page.redraw();
      }
    };
    // Sent again, with the same id, for as long as the harness cannot be reached.
    const sendOnce = () =>
      retryWhileUnreachable(
        () => receive(this.conversation.send(text, { signal, messageId, metadata, command: isCommand, parts })),
        (error, delayMs) => {
          if (answered) throw error;
          bubble.classList.add('retrying');
          this.page.unreachable(error, delayMs);
        },
        signal,
      );
    try {
      if (signal && metadata) {
        if (!(holdsSlot = slots.tryTake())) {
          // Into the queue now, its stream later: nothing waits in the page.
          await retryWhileUnreachable(
            () => this.conversation.place(text, messageId, metadata),
            (error, delayMs) => this.page.unreachable(error, delayMs),
            signal,
          );
          answered = true;
          await slots.take(signal);
          holdsSlot = true;
        }
      }
      await sendOnce();
      // A queued message's stream that ended before its turn on a task still open: taken up again (the same id).
      for (let again = 0; queuedId && !view && !taskEnded && !signal?.aborted && again < 3; again++) await sendOnce();
      if (queuedId && !view && !signal?.aborted)
        this.unsent(text, bubble, messageId, taskEnded ? 'the task ended before its turn' : 'its turn did not start');
    } catch (error) {
      // Left for another conversation: the message stays in its task's queue.
      if (!signal?.aborted) {
        this.page.error(oneLine(error));
        // Refused (a turn another client runs, a full queue, the server gone): the text is not lost.
        // A queued one the agent took stays queued here: a reload takes up its stream again.
        if (!answered) this.unsent(text, bubble, messageId, 'it is back in the input');
      }
    } finally {
      if (holdsSlot) slots.give();
      view?.done();
      if (view && !isCommand) this.replyArtifact = undefined;
      this.streams--;
      this.running.delete(token);
      if (this.streams === 0) delete document.body.dataset['streaming'];
      this.ended();
    }
  }

  /** A queued message's turn has started: it leaves the queue, and its reply is drawn under it. */
  private started(messageId: string, bubble: HTMLElement): TurnView {
    this.queued.delete(messageId);
    this.transcript.unqueue(bubble);
    bubble.removeAttribute('title');
    this.page.save();
    return new TurnView(this.transcript, true);
  }

  private unsent(text: string, bubble: HTMLElement, messageId: string, why: string): void {
    if (this.queued.delete(messageId)) this.page.save();
    this.transcript.unqueue(bubble);
    bubble.classList.add('unsent');
    bubble.title = `Not sent: ${why}`;
    this.page.giveBack(text);
  }

  /** Messages held for want of a task: to its queue once there is one; else, once nothing runs, the first starts one. */
  private sendWaiting(): void {
    if (this.waitingForTask.length === 0) return;
    if (this.conversation.taskId) {
      for (const { text, bubble } of this.waitingForTask.splice(0)) this.enqueue(text, bubble, newId());
    } else if (!this.busy) {
      const { text, bubble } = this.waitingForTask.shift()!;
      this.transcript.unqueue(bubble);
      void this.deliver(text, bubble, false);
    }
  }

  /** A stream ended: what waits goes on, and the idle watch starts once nothing streams. */
  private ended(): void {
    this.page.redraw();
    this.page.save();
    this.sendWaiting();
    if (!this.busy) this.page.idleWatch.start();
  }
}

/** At most `max` holders at once; the others wait their turn, in order. */
class Slots {
  private held = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly max: number) {}

  /** Takes one if one is free now. */
  tryTake(): boolean {
    if (this.held >= this.max) return false;
    this.held++;
    return true;
  }

  /** Takes one once one is free; rejects if `signal` aborts first. */
  take(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    if (this.tryTake()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const wake = () => {
        signal.removeEventListener('abort', quit);
        resolve();
      };
      const quit = () => {
        const at = this.waiting.indexOf(wake);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(signal.reason);
      };
      this.waiting.push(wake);
      signal.addEventListener('abort', quit, { once: true });
    });
  }

  /** Gives one back: the first waiting takes it. */
  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.held--;
  }
}

/** 1st, 2nd, 3rd, 4th… */
function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}
