/**
 * The conversation with the harness through the SDK's own client (JSON-RPC transport, streamed):
 * one task kept across messages, a new task in the same context once a task has ended, and each
 * stream event read into the few things the page shows. No DOM here.
 */
import { Role, TaskState, type AgentCard, type Message, type StreamResponse, type Task } from '@a2a-js/sdk';
import {
  AgentCardResolver,
  ClientFactory,
  JsonRpcTransportFactory,
  ServiceParameters,
  withA2AExtensions,
  type CallInterceptor,
  type Client,
} from '@a2a-js/sdk/client';
import {
  AWAITING_APPROVAL_NOTICE,
  COMMAND_KEY,
  COMMANDS_EXTENSION_URI,
  JSONRPC_PATH,
  MODEL_KEY,
  NOTICE_KEY,
  SUBTASK_NOTE_KEY,
  TASK_REF_KEY,
  TOOL_CALL_KEY,
  TOOL_OUTPUT_ARTIFACT_NAME,
  isTerminal,
  textOf,
  textPart,
  toolCallsOf,
  TURN_FAILURE_NOTICES,
  type ToolCallData,
} from '../../src/wire.js';
import { generationOf, LAST_EVENT_ID_HEADER, resumableStream } from '../../src/stream-resume.js';
import { listRecent, type RecentTask } from './recent.js';

/** What one stream event means for the page. */
export type ChatEvent =
  /** The task the message went to (created or continued); its status message is old news. */
  | { kind: 'task'; taskId: string; contextId: string; state: TaskState }
  /** A piece of the model's reply as it streams. */
  | { kind: 'chunk'; artifactId: string; text: string; append: boolean }
  /** The task's state changed (or was re-announced). */
  | { kind: 'state'; taskId: string; contextId: string; state: TaskState }
  /** An agent message: the whole reply at the end of a turn (with the model that wrote it), or a failure explained. */
  | { kind: 'reply'; messageId: string; text: string; model?: string }
  /** A command's reply (`metadata.command`), with the sub-task it started (`metadata.task_ref`); `/model`'s says the task's model. */
  | { kind: 'command'; messageId: string; command: string; text: string; taskRef?: string; model?: string }
  /** The harness's note that a sub-task ended. */
  | { kind: 'note'; messageId: string; text: string; subtaskId?: string }
  /** A tool call's status changed (the tool-calls extension): one row per call, updated in place. */
  | { kind: 'tool'; call: ToolCallData }
  /** A message the user sent, as a task read back shows it. */
  | { kind: 'user'; messageId: string; text: string }
  /** The harness's own words ending a turn, apart from the model's reply (calls waiting for approval, a failure explained). */
  | { kind: 'notice'; messageId: string; text: string; error?: boolean };

function stringAt(metadata: Record<string, unknown> | undefined, key: string): string | undefined {
  const value = metadata?.[key];
  return typeof value === 'string' && value ? value : undefined;
}

/** Reads one stream event. */
export function interpret(event: StreamResponse): ChatEvent[] {
  const payload = event.payload;
  switch (payload?.$case) {
    case 'task': {
      const task = payload.value;
      return [
        {
          kind: 'task',
          taskId: task.id,
          contextId: task.contextId,
          state: task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED,
        },
      ];
    }
    case 'artifactUpdate': {
      const { artifact, append } = payload.value;
      // A call's whole output: its row says where it is; it is not the reply.
      if (artifact?.name === TOOL_OUTPUT_ARTIFACT_NAME) return [];
      const text = textOf(artifact?.parts);
      return artifact && text ? [{ kind: 'chunk', artifactId: artifact.artifactId, text, append }] : [];
    }
    case 'message':
      return [{ kind: 'reply', messageId: payload.value.messageId, text: textOf(payload.value.parts) }];
    case 'statusUpdate': {
      const update = payload.value;
      const state = update.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED;
      const events: ChatEvent[] = [{ kind: 'state', taskId: update.taskId, contextId: update.contextId, state }];
      const message = update.status?.message;
      if (message) events.push(...readStatusMessage(message, update.metadata));
      return events;
    }
    default:
      return [];
  }
}

function readStatusMessage(message: Message, updateMetadata: Record<string, unknown> | undefined): ChatEvent[] {
  const metadata = { ...message.metadata, ...updateMetadata };
  const text = textOf(message.parts);
  const command = stringAt(metadata, COMMAND_KEY);
  if (command) {
    const taskRef = stringAt(metadata, TASK_REF_KEY) ?? message.referenceTaskIds?.[0];
    const model = command === 'model' ? currentModelOf(message) : undefined;
    return [
      {
        kind: 'command',
        messageId: message.messageId,
        command,
        text,
        ...(taskRef ? { taskRef } : {}),
        ...(model ? { model } : {}),
      },
    ];
  }
  const note = metadata[SUBTASK_NOTE_KEY] as { id?: unknown } | undefined;
  if (note && typeof note === 'object') {
    return [
      typeof note.id === 'string'
        ? { kind: 'note', messageId: message.messageId, text, subtaskId: note.id }
        : { kind: 'note', messageId: message.messageId, text },
    ];
  }
  if (metadata[TOOL_CALL_KEY] !== undefined) return toolCallsOf(message.parts).map((call) => ({ kind: 'tool', call }));
  const notice = metadata[NOTICE_KEY];
  if (typeof notice === 'string' && TURN_FAILURE_NOTICES.has(notice))
    return [{ kind: 'notice', messageId: message.messageId, text, error: true }];
  if (notice === AWAITING_APPROVAL_NOTICE) {
    return [
      { kind: 'notice', messageId: message.messageId, text },
      ...toolCallsOf(message.parts).map((call): ChatEvent => ({ kind: 'tool', call })),
    ];
  }
  const model = stringAt(metadata, MODEL_KEY);
  return [{ kind: 'reply', messageId: message.messageId, text, ...(model ? { model } : {}) }];
}

/** The task's model after a `/model` reply: its data part's `current`. */
function currentModelOf(message: Message): string | undefined {
  for (const part of message.parts) {
    const current =
      part.content?.$case === 'data' ? (part.content.value as Record<string, unknown>)['current'] : undefined;
    if (typeof current === 'string' && current) return current;
  }
  return undefined;
}

/**
 * The reply of the turn running on a task read back: the artifact this page saw streaming
 * (`replyArtifact`, kept across the reload), else the newest reply artifact when the task has
 * more reply artifacts than its history has turn-ending agent messages (each finished turn has
 * one of each; the running turn has its artifact only).
 */
export function runningReply(task: Task, replyArtifact?: string): { artifactId: string; text: string } | undefined {
  const replies = task.artifacts.filter((a) => a.name !== TOOL_OUTPUT_ARTIFACT_NAME);
  const known = replyArtifact ? replies.find((a) => a.artifactId === replyArtifact) : undefined;
  const ended = task.history.filter(
    (m) =>
      m.role === Role.ROLE_AGENT && (m.metadata?.[MODEL_KEY] !== undefined || m.metadata?.[NOTICE_KEY] !== undefined),
  ).length;
  const artifact = known ?? (!replyArtifact && replies.length > ended ? replies.at(-1) : undefined);
  return artifact ? { artifactId: artifact.artifactId, text: textOf(artifact.parts) } : undefined;
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

/** The agent card, read from beside the page (`.well-known/agent-card.json` under the harness's root). */
export function loadCard(pageUrl: string): Promise<AgentCard> {
  return AgentCardResolver.default.resolve(harnessRoot(pageUrl));
}

/** A client of the harness for the page at `pageUrl`: JSON-RPC beside the page, extension active. */
export async function connect(card: AgentCard, pageUrl: string): Promise<Client> {
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory()],
    preferredTransports: ['JSONRPC'],
    clientConfig: { interceptors: [activateCommands] },
  });
  return factory.createFromAgentCard(besidePage(card, pageUrl));
}

/** One conversation: a task kept across messages, and its context once the task has ended. */
export class Conversation {
  taskId: string | undefined;
  contextId: string | undefined;
  state: TaskState | undefined;
  /** The task's model, as its newest reply or `/model` said; unknown before either. */
  model: string | undefined;
  private readonly ended = new Set<string>();

  constructor(private readonly client: Client) {}

  /** Sends `text` on the current task (or a new one in the current context), yielding what comes back. */
  async *send(text: string, signal?: AbortSignal): AsyncGenerator<ChatEvent, void, undefined> {
    const message = userMessage(text, this.taskId, this.contextId);
    const stream = resumableStream(
      this.client.sendMessageStream({ tenant: '', message, configuration: undefined, metadata: {} }, { signal }),
      (taskId, after, resumeSignal) => this.eventsAfter(taskId, after, resumeSignal),
      { signal, ...this.resumeNotices },
    );
    for await (const event of stream) {
      for (const item of interpret(event)) {
        this.track(item);
        yield item;
      }
    }
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
  ): Promise<{ events: ChatEvent[]; running: boolean; reply?: { artifactId: string; text: string } }> {
    const task: Task = await this.client.getTask({ tenant: '', id: taskId, historyLength: undefined });
    this.generation = generationOf({ payload: { $case: 'task', value: task } });
    this.contextId = task.contextId;
    this.state = task.status?.state;
    this.taskId = isTerminal(this.state) ? undefined : task.id;
    this.model = undefined;
    const events: ChatEvent[] = [];
    for (const message of task.history.slice(-historyLength)) {
      if (message.role === Role.ROLE_USER)
        events.push({ kind: 'user', messageId: message.messageId, text: textOf(message.parts) });
      else events.push(...readStatusMessage(message, undefined));
    }
    for (const event of events) this.track(event);
    const running = this.state === TaskState.TASK_STATE_WORKING || this.state === TaskState.TASK_STATE_SUBMITTED;
    const reply = running ? runningReply(task, replyArtifact) : undefined;
    return { events, running, ...(reply ? { reply } : {}) };
  }

  /** Said when a stream broke and reconnecting starts, and once it goes on (the page shows it). */
  resumeNotices: { onDropped?: (error: unknown) => void; onResumed?: () => void } = {};
  /** The task's generation when it was read back: a follow starts after it. */
  private generation: number | undefined;

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
    for await (const event of stream) {
      for (const item of interpret(event)) {
        this.track(item);
        yield item;
      }
    }
  }

  /** Forgets the task and its context: the next message starts a new conversation. */
  reset(): void {
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
   * Follows a sub-task until it ends, reporting its state as it changes. It polls GetTask
   * (every second at first, then less often) rather than holding a SubscribeToTask stream
   * open: a browser allows only six connections to one host, and each stream would hold one.
   * Ends when the sub-task does, or when `signal` aborts.
   */
  async watchSubtask(id: string, onState: (state: TaskState | undefined) => void, signal?: AbortSignal): Promise<void> {
    let last: TaskState | undefined;
    for (let delay = 1000; !signal?.aborted; delay = Math.min(delay * 1.5, 10_000)) {
      const task = await this.client.getTask({ tenant: '', id, historyLength: 0 }, { signal });
      const state = task.status?.state;
      if (state !== last) onState((last = state));
      if (isTerminal(state)) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
    }
  }

  private track(event: ChatEvent): void {
    if ((event.kind === 'reply' || event.kind === 'command') && event.model) this.model = event.model;
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
