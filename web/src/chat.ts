/**
 * The conversation with the harness through the SDK's own client (JSON-RPC transport, streamed):
 * one task kept across messages, a new task in the same context once a task has ended, and each
 * stream event read into the few things the page shows. No DOM here.
 */
import { Role, TaskState, type AgentCard, type Message, type Part, type StreamResponse, type Task } from '@a2a-js/sdk';
import {
  ClientFactory,
  JsonRpcTransportFactory,
  ServiceParameters,
  withA2AExtensions,
  type CallInterceptor,
  type Client,
} from '@a2a-js/sdk/client';
import {
  COMMANDS_EXTENSION_URI,
  JSONRPC_PATH,
  WHILE_BUSY_KEY,
  isInFlight,
  isTerminal,
  subtaskChildrenOf,
  textOf,
  textPart,
} from '../../src/wire.js';
import { FORK_COMMAND } from '../../src/conversation-replies.js';
import {
  generationOf,
  LAST_EVENT_ID_HEADER,
  resumableStream,
  runningReply,
  turnReplyTo,
} from '../../src/stream-resume.js';
import { interpret, readHistoryMessage, readStatusMessage, type ChatEvent } from './events.js';
import { harnessFetch } from './reachability.js';
import { listRecent, type RecentTask } from './recent.js';
import { watchSubtask, type WaitPast } from './task-wait.js';

export { interpret, type ChatEvent } from './events.js';

/**
 * What a queued message's turn has replied before its stream came, from the task as read: the
 * reply streaming, or, once the turn has ended, its whole reply (drawn once, by its id).
 */
function replySoFar(task: Task, messageId: string): ChatEvent[] {
  if (isInFlight(task.status?.state)) {
    const reply = runningReply(task);
    return reply ? [{ kind: 'chunk', artifactId: reply.artifactId, text: reply.text, append: false }] : [];
  }
  const reply = turnReplyTo(task, messageId);
  return reply ? [{ kind: 'reply', messageId: reply.messageId, text: textOf(reply.parts) }] : [];
}

/** The task an event is about. */
function taskIdOf(event: StreamResponse): string | undefined {
  const p = event.payload;
  if (p?.$case === 'task') return p.value.id;
  return p?.$case === 'statusUpdate' || p?.$case === 'artifactUpdate' ? p.value.taskId : undefined;
}

/** A task's sub-tasks (its metadata names them) that no note in its history has said ended. */
export function subtasksRunningIn(task: Task): string[] {
  const ended = new Set<string>();
  for (const message of task.history) {
    for (const event of readStatusMessage(message, undefined)) {
      if (event.kind === 'note' && event.subtaskId && event.subtaskEnded) ended.add(event.subtaskId);
    }
  }
  return subtaskChildrenOf(task.metadata).filter((id) => !ended.has(id));
}

/** A random id, also where `crypto.randomUUID` is missing (a page served over plain http to another host). */
export function newId(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function userMessage(text: string, taskId: string | undefined, contextId: string | undefined): Message {
  return {
    messageId: newId(),
    taskId: taskId ?? '',
    contextId: contextId ?? '',
    role: Role.ROLE_USER,
    parts: [textPart(text)],
    metadata: {},
    extensions: [],
    referenceTaskIds: [],
  };
}

/** Sends `A2A-Extensions: <Commands v1>` on every call, which activates the extension. */
export const activateCommands: CallInterceptor = {
  async before(args) {
    args.options = {
      ...args.options,
      serviceParameters: ServiceParameters.createFrom(
        args.options?.serviceParameters,
        withA2AExtensions(COMMANDS_EXTENSION_URI),
      ),
    };
  },
  async after() {},
};

/**
 * The harness's root as the browser reaches it: the folder the page was loaded from. The page
 * is served at the harness's root, so whatever stands in between (a reverse proxy on another
 * host, under a path such as `/agent/`) the card and JSON-RPC are found beside the page, on the
 * page's own origin, which is also all the page's `connect-src 'self'` allows.
 */
export function harnessRoot(pageUrl: string): string {
  return new URL('./', pageUrl).href;
}

/**
 * The card with its JSON-RPC address moved beside the page. The card names the address clients
 * are told to use (the listening address, or `--public-url`), which need not be the one in the
 * browser's address bar; another origin would be blocked by CORS and by the page's CSP.
 */
export function besidePage(card: AgentCard, pageUrl: string): AgentCard {
  return {
    ...card,
    supportedInterfaces: (card.supportedInterfaces ?? []).map((entry) =>
      entry.protocolBinding.toUpperCase() === 'JSONRPC'
        ? { ...entry, url: new URL(JSONRPC_PATH.slice(1), harnessRoot(pageUrl)).href }
        : entry,
    ),
  };
}

/** A client of the harness for the page at `pageUrl`: JSON-RPC beside the page, extension active. */
export async function connect(card: AgentCard, pageUrl: string): Promise<Client> {
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl: harnessFetch })],
    preferredTransports: ['JSONRPC'],
    clientConfig: { interceptors: [activateCommands] },
  });
  return factory.createFromAgentCard(besidePage(card, pageUrl));
}

/** How `Conversation.send` sends a message. */
export interface SendOptions {
  signal?: AbortSignal;
  /** The id of a message sent before that may have reached the harness: it runs once (CMD-34). */
  messageId?: string;
  /** The message's metadata (`tiny-harness/while-busy: "enqueue"` to wait in the task's queue while it is busy). */
  metadata?: Record<string, unknown>;
  /** The text is a command the card lists: its stream ends with its reply, unless what it started follows. */
  command?: boolean;
  /** What the message holds instead of the text (an answer's data part, issue 39). */
  parts?: Part[];
}

/** One conversation: a task kept across messages, and its context once the task has ended. */
export class Conversation {
  taskId: string | undefined;
  contextId: string | undefined;
  state: TaskState | undefined;
  /** The task's model, as its newest reply or `/model` said; unknown before either. */
  model: string | undefined;
  private readonly ended = new Set<string>();

  constructor(
    private readonly client: Client,
    /** The agent's A2A 1.1 `GetTask` that waits for a task to move on; undefined when it speaks only 1.0. */
    private readonly waitPast?: WaitPast,
  ) {}

  /** Sends `text` on the current task (or a new one in the current context), yielding what comes back. */
  async *send(text: string, options: SendOptions = {}): AsyncGenerator<ChatEvent, void, undefined> {
    const { signal, messageId, metadata, command } = options;
    const message = userMessage(text, this.taskId, this.contextId);
    if (options.parts) message.parts = options.parts;
    // A resend keeps the first send's id: the harness runs a message id once (CMD-34).
    if (messageId) message.messageId = messageId;
    if (metadata) message.metadata = { ...metadata };
    // Until a queued message's turn starts, its stream sends nothing of the turns before it: one
    // that breaks meanwhile is taken up by sending the message again (the stream of its place,
    // spec/while-busy-extension-v1.md "Resending"), not by following the task's events.
    let waiting = metadata?.[WHILE_BUSY_KEY] === 'enqueue';
    const sendIt = (s?: AbortSignal) =>
      this.client.sendMessageStream({ tenant: '', message, configuration: undefined, metadata: {} }, { signal: s });
    const stream = resumableStream(
      sendIt(signal),
      (taskId, after, resumeSignal) => (waiting ? sendIt(resumeSignal) : this.eventsAfter(taskId, after, resumeSignal)),
      { signal, command, ...this.resumeNotices },
    );
    const turn = this.turnBegins();
    for await (const event of stream) {
      const p = event.payload;
      if (waiting && p?.$case === 'task' && p.value.history.some((m) => m.messageId === message.messageId)) {
        waiting = false;
        turn.modelChanges = this.modelChanges;
        yield { kind: 'started', messageId: message.messageId };
        yield* this.readOne(event, turn);
        // Sent again after its turn began (its place's stream came late): what the turn has replied so far.
        yield* replySoFar(p.value, message.messageId);
        continue;
      }
      yield* this.readOne(event, turn);
    }
  }

  /**
   * Sends `text` on the current task with `metadata`, answered at once (`returnImmediately`):
   * a message put in the task's queue on the agent without a connection held open for it.
   */
  async place(text: string, messageId: string, metadata: Record<string, unknown>): Promise<void> {
    const message = userMessage(text, this.taskId, this.contextId);
    message.messageId = messageId;
    message.metadata = { ...metadata };
    const configuration = {
      acceptedOutputModes: [],
      taskPushNotificationConfig: undefined,
      historyLength: 0,
      returnImmediately: true,
    };
    await this.client.sendMessage({ tenant: '', message, configuration, metadata: {} });
  }

  /** Sends a command on the current task and waits for its reply (a blocking call: the reply is all it returns). */
  async command(text: string): Promise<Message | undefined> {
    const message = userMessage(text, this.taskId, this.contextId);
    const result = await this.client.sendMessage({ tenant: '', message, configuration: undefined, metadata: {} });
    return 'status' in result ? result.status?.message : result;
  }

  /**
   * Goes on in a task read back (a reload): its history (the newest `historyLength` messages)
   * as events to draw, and whether a turn runs on it now. A task that has ended leaves only
   * its context: the next message starts a new task in it.
   */
  async restore(
    taskId: string,
    replyArtifact?: string,
    historyLength = 50,
  ): Promise<{
    events: ChatEvent[];
    running: boolean;
    reply?: { artifactId: string; text: string };
    /** The ids of every message of the task's history (a queued message kept across a reload may have run). */
    messageIds: Set<string>;
  }> {
    const task: Task = await this.client.getTask({ tenant: '', id: taskId, historyLength: undefined });
    this.generation = generationOf({ payload: { $case: 'task', value: task } });
    this.subtasksRunning.clear();
    for (const id of subtasksRunningIn(task)) this.subtasksRunning.add(id);
    this.contextId = task.contextId;
    this.state = task.status?.state;
    this.taskId = isTerminal(this.state) ? undefined : task.id;
    this.model = undefined;
    const events: ChatEvent[] = [];
    for (const message of task.history.slice(-historyLength)) events.push(...readHistoryMessage(message));
    for (const event of events) this.track(event, this.turnBegins());
    const running = this.state === TaskState.TASK_STATE_WORKING || this.state === TaskState.TASK_STATE_SUBMITTED;
    const reply = running ? runningReply(task, replyArtifact) : undefined;
    const messageIds = new Set(task.history.map((m) => m.messageId));
    return { events, running, messageIds, ...(reply ? { reply } : {}) };
  }

  /** Said when a stream broke and reconnecting starts, and once it goes on (the page shows it). */
  resumeNotices: { onDropped?: (error: unknown) => void; onResumed?: () => void } = {};
  /**
   * The newest generation of the current task's events seen here (read back, or streamed): a
   * follow starts after it.
   */
  generation: number | undefined;
  /** The current task's sub-tasks that have not ended (no note has said they did). */
  readonly subtasksRunning = new Set<string>();

  /** The events of `stream`, read, tracked and noted as seen. */
  async *read(stream: AsyncIterable<StreamResponse>): AsyncGenerator<ChatEvent, void, undefined> {
    const turn = this.turnBegins();
    for await (const event of stream) yield* this.readOne(event, turn);
  }

  /** `/model` replies read so far: a turn's reply names the task's model only if none came since the turn began. */
  private modelChanges = 0;

  /** What a stream's replies are read against: the `/model` replies read when its turn began. */
  private turnBegins(): { modelChanges: number } {
    return { modelChanges: this.modelChanges };
  }

  private readOne(event: StreamResponse, turn: { modelChanges: number }): ChatEvent[] {
    const items = interpret(event);
    for (const item of items) this.track(item, turn);
    const g = generationOf(event);
    if (g !== undefined && this.taskId !== undefined && taskIdOf(event) === this.taskId) this.generation = g;
    return items;
  }

  /** Subscribes to the current task after generation `after` (all of it when undefined). */
  subscribe(after: number | undefined, signal?: AbortSignal): AsyncGenerator<StreamResponse> {
    if (!this.taskId) throw new Error('no task to follow');
    return after === undefined
      ? this.client.resubscribeTask({ tenant: '', id: this.taskId }, { signal })
      : this.eventsAfter(this.taskId, after, signal);
  }

  private eventsAfter(taskId: string, after: number, signal?: AbortSignal): AsyncGenerator<StreamResponse> {
    return this.client.resubscribeTask(
      { tenant: '', id: taskId },
      { signal, serviceParameters: { [LAST_EVENT_ID_HEADER]: String(after) } },
    );
  }

  /** The events of the turn running on the current task, from now on (a reload in the middle of a turn). */
  async *follow(shown?: Map<string, string>, signal?: AbortSignal): AsyncGenerator<ChatEvent, void, undefined> {
    if (!this.taskId) return;
    const after = this.generation;
    // Without a generation (an agent that does not number its events), a plain subscribe: what comes next.
    const stream =
      after === undefined
        ? this.client.resubscribeTask({ tenant: '', id: this.taskId }, { signal })
        : resumableStream(
            this.eventsAfter(this.taskId, after, signal),
            (taskId, last, resumeSignal) => this.eventsAfter(taskId, last, resumeSignal),
            { signal, taskId: this.taskId, after, ...(shown ? { shown } : {}), ...this.resumeNotices },
          );
    yield* this.read(stream);
  }

  /** Forgets the task and its context: the next message starts a new conversation. */
  reset(): void {
    this.generation = undefined;
    this.subtasksRunning.clear();
    this.taskId = undefined;
    this.contextId = undefined;
    this.state = undefined;
    this.model = undefined;
  }

  /** The user's newest conversations, newest first, titled by their first message. */
  recent(limit = 20): Promise<RecentTask[]> {
    return listRecent(this.client, limit);
  }

  /** A sub-task's state and result (its status message, else its artifacts' text). */
  async subtask(id: string): Promise<{ state: TaskState | undefined; text: string }> {
    const task: Task = await this.client.getTask({ tenant: '', id, historyLength: 0 });
    const text = textOf(task.status?.message?.parts) || task.artifacts.map((a) => textOf(a.parts)).join('\n');
    return { state: task.status?.state, text };
  }

  /**
   * Follows a sub-task until it ends, reporting its state as it changes (task-wait.ts): by
   * `GetTask` waiting for it to move on when the agent speaks A2A 1.1, else polled. Never a
   * SubscribeToTask stream: a browser allows only six connections to one host.
   */
  watchSubtask(id: string, onState: (state: TaskState | undefined) => void, signal?: AbortSignal): Promise<void> {
    return watchSubtask(this.client, this.waitPast, id, onState, signal);
  }

  /**
   * Notes what an event says of the conversation. The model: a `/model` reply's, or the model
   * that wrote a reply, unless `/model` changed it while that reply's turn ran (`turn`).
   */
  private track(event: ChatEvent, turn: { modelChanges: number }): void {
    // A fork's task is the conversation's copy, not a sub-task whose end to wait for.
    if (event.kind === 'command' && event.taskRef && event.command !== FORK_COMMAND)
      this.subtasksRunning.add(event.taskRef);
    if (event.kind === 'note' && event.subtaskId && event.subtaskEnded) this.subtasksRunning.delete(event.subtaskId);
    if (event.kind === 'command' && event.model) {
      this.model = event.model;
      this.modelChanges++;
    }
    if (event.kind === 'reply' && event.model && turn.modelChanges === this.modelChanges) this.model = event.model;
    if (event.kind !== 'task' && event.kind !== 'state') return;
    // Only this conversation's task moves the ids (a note about a sub-task names the parent).
    if ((this.taskId && event.taskId !== this.taskId) || this.ended.has(event.taskId)) return;
    this.contextId = event.contextId || this.contextId;
    this.state = event.state;
    // An ended task takes no more messages: the next one starts a new task in the same context.
    if (isTerminal(event.state)) {
      this.ended.add(event.taskId);
      this.taskId = undefined;
    } else {
      this.taskId = event.taskId;
    }
  }
}
