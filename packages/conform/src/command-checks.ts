/**
 * What sending the card's own command shows, on one transport: a command with no task creates
 * one (CMD-10); the reply's shape (CMD-4, CMD-5); the task's state and metadata untouched
 * (CMD-6); the reply on a blocking send, on a stream, and on an open subscription (CMD-8);
 * the header echoed (CMD-17); a resend not run again (CMD-13); a finished task refusing it
 * (CMD-11). Nothing here sends text that a conforming server would give its model.
 */
import { Role, TaskState, type Message, type SendMessageResult, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { randomUUID } from 'node:crypto';
import type { ListedCommand } from './card-checks.js';
import { COMMANDS_URI, textOf, userMessage, type HeaderTap, type TransportName } from './probe-client.js';
import type { Results } from './results.js';

const WAIT_MS = 15_000;

/** What the checks of every transport share. */
export interface Probe {
  results: Results;
  command: ListedCommand;
  /** Arguments sent with the command (`--command "NAME ARGS"`), if any. */
  args?: string;
  /** Tasks the kit created, canceled at the end. */
  created: Set<string>;
  /** Sub-tasks the replies named (`task_ref`). */
  taskRefs: Set<string>;
}

export function within<T>(promise: Promise<T>, what: string, ms = WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export function describe(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.split('\n')[0]!.slice(0, 300);
}

export function sendBlocking(client: Client, message: Message, returnImmediately = false): Promise<SendMessageResult> {
  const configuration = returnImmediately
    ? { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true }
    : undefined;
  return within(client.sendMessage({ tenant: '', message, configuration, metadata: {} }), 'SendMessage');
}

export function isTask(result: SendMessageResult): result is Task {
  return 'status' in result;
}

/** Why `message` is not a well-formed reply of `name` (CMD-4's keys, CMD-5's shape); undefined when it is. */
export function replyProblem(message: Message | undefined, name: string): string | undefined {
  if (!message) return 'the task has no status message';
  if (message.role !== Role.ROLE_AGENT)
    return `the reply's role is ${Role[message.role] ?? message.role}, not ROLE_AGENT`;
  const problem = metadataProblem(message.metadata, name, 'the reply message');
  if (problem) return problem;
  const ref = message.metadata?.['task_ref'];
  if (typeof ref === 'string' && !message.referenceTaskIds.includes(ref))
    return `task_ref ${ref} is not in referenceTaskIds`;
  if (!message.extensions.includes(COMMANDS_URI))
    return `the reply's extensions (${JSON.stringify(message.extensions)}) do not list the extension's URI`;
  const first = message.parts[0];
  if (first?.content?.$case !== 'text' || !first.content.value.trim())
    return 'the reply does not start with a text part';
  return undefined;
}

/** CMD-4: metadata is exactly `{command}` or `{command, task_ref}`. */
export function metadataProblem(
  metadata: Record<string, unknown> | undefined,
  name: string,
  where: string,
): string | undefined {
  const keys = Object.keys(metadata ?? {}).sort();
  if (metadata?.['command'] !== name)
    return `${where}'s metadata.command is ${JSON.stringify(metadata?.['command'])}, not "${name}"`;
  const extra = keys.filter((key) => key !== 'command' && key !== 'task_ref');
  if (extra.length) return `${where}'s metadata has other keys: ${extra.join(', ')}`;
  if ('task_ref' in (metadata ?? {}) && typeof metadata?.['task_ref'] !== 'string')
    return `${where}'s task_ref is not a string`;
  return undefined;
}

export function commandText(probe: Probe): string {
  return probe.args ? `/${probe.command.name} ${probe.args}` : `/${probe.command.name}`;
}

/** Every check of one transport. */
export async function checkTransport(
  probe: Probe,
  transport: TransportName,
  client: Client,
  tap: HeaderTap,
): Promise<void> {
  const { results, command } = probe;
  // CMD-10: a command with no task creates one, INPUT_REQUIRED, and the reply is its status.
  tap.reset();
  let created: Task;
  try {
    const result = await sendBlocking(client, userMessage(commandText(probe)));
    if (!isTask(result)) {
      results.fail(
        'CMD-10',
        'a command with no task creates a task and replies',
        `SendMessage answered a message, not a task: "${textOf(result).slice(0, 120)}"`,
        transport,
      );
      return;
    }
    created = result;
    probe.created.add(created.id);
  } catch (error) {
    results.fail(
      'CMD-10',
      'a command with no task creates a task and replies',
      `SendMessage failed: ${describe(error)}`,
      transport,
    );
    return;
  }
  const state = created.status?.state;
  // The reply's shape is CMD-5's to judge; here, that there is one.
  results.judge(
    'CMD-10',
    'a command with no task creates a task in INPUT_REQUIRED and replies',
    state !== TaskState.TASK_STATE_INPUT_REQUIRED
      ? `the new task is ${TaskState[state ?? 0]}`
      : isAgentMessage(created.status?.message)
        ? undefined
        : 'the new task has no agent message as its status message',
    transport,
  );
  noteRef(probe, created.status?.message);
  results.judge(
    'CMD-5',
    'the reply message: agent role, both keys, the extension listed, text first',
    replyProblem(created.status?.message, command.name),
    transport,
  );
  results.judge(
    'CMD-17',
    'the A2A-Extensions header is echoed (blocking send)',
    tap.allEcho(COMMANDS_URI) ? undefined : `A2A-Extensions in the answer: ${JSON.stringify(tap.values)}`,
    transport,
  );

  await checkStream(probe, transport, client, tap, created);
  await checkSubscription(probe, transport, client, created);
  await checkUntouched(probe, transport, client, created, state);
  await checkResend(probe, transport, client, created);
  await checkFinished(probe, transport, client);
}

function noteRef(probe: Probe, message: Message | undefined): void {
  const ref = message?.metadata?.['task_ref'];
  if (typeof ref === 'string') probe.taskRefs.add(ref);
}

export function isAgentMessage(message: Message | undefined): boolean {
  return message?.role === Role.ROLE_AGENT;
}

/**
 * A status update carrying an agent message: on a stream or subscription that only the kit's
 * command moves, that is the reply, whatever its metadata says (CMD-4 and CMD-5 judge those).
 */
function isReplyEvent(event: StreamResponse): boolean {
  const payload = event.payload;
  return payload?.$case === 'statusUpdate' && isAgentMessage(payload.value.status?.message);
}

/** CMD-8 and CMD-4 on `SendStreamingMessage`: the task, then the reply status update, then the end. */
async function checkStream(
  probe: Probe,
  transport: TransportName,
  client: Client,
  tap: HeaderTap,
  task: Task,
): Promise<void> {
  const { results, command } = probe;
  tap.reset();
  const events: StreamResponse[] = [];
  try {
    await within(
      (async () => {
        const stream = client.sendMessageStream({
          tenant: '',
          message: userMessage(commandText(probe), { taskId: task.id, contextId: task.contextId }),
          configuration: undefined,
          metadata: {},
        });
        for await (const event of stream) events.push(event);
      })(),
      'SendStreamingMessage (the stream did not close)',
    );
  } catch (error) {
    results.fail('CMD-8', 'a stream yields the task, then the reply, then closes', describe(error), transport);
    return;
  }
  const kinds = events.map((event) => event.payload?.$case ?? 'nothing');
  const reply = events.find(isReplyEvent);
  const update = reply?.payload?.$case === 'statusUpdate' ? reply.payload.value : undefined;
  results.judge(
    'CMD-8',
    'a stream yields the task, then the reply, then closes',
    !update
      ? `events: ${kinds.join(', ')}; none is a status update with the reply`
      : kinds[0] !== 'task'
        ? `the first event is ${kinds[0]}, not the task`
        : undefined,
    transport,
  );
  if (!update) return;
  noteRef(probe, update.status?.message);
  const stateProblem =
    update.status?.state === task.status?.state
      ? undefined
      : `the reply's state is ${TaskState[update.status?.state ?? 0]}, the task was ${TaskState[task.status?.state ?? 0]}`;
  results.judge(
    'CMD-4',
    "the reply status update keeps the task's state, its metadata exactly {command[, task_ref]}",
    stateProblem ?? metadataProblem(update.metadata, command.name, 'the status update'),
    transport,
  );
  results.judge(
    'CMD-17',
    'the A2A-Extensions header is echoed (stream)',
    tap.allEcho(COMMANDS_URI) ? undefined : `A2A-Extensions in the answer: ${JSON.stringify(tap.values)}`,
    transport,
  );
}

/** CMD-8: a subscription open on the task receives the reply of a command sent meanwhile. */
async function checkSubscription(probe: Probe, transport: TransportName, client: Client, task: Task): Promise<void> {
  const { results } = probe;
  const title = 'an open SubscribeToTask stream receives the reply';
  const abort = new AbortController();
  let firstEvent: () => void = () => {};
  const opened = new Promise<void>((resolve) => (firstEvent = resolve));
  let received = false;
  let ended = false;
  const reading = (async () => {
    try {
      for await (const event of client.resubscribeTask({ tenant: '', id: task.id }, { signal: abort.signal })) {
        firstEvent();
        if (isReplyEvent(event)) {
          received = true;
          break;
        }
      }
    } finally {
      ended = true;
      firstEvent();
    }
  })();
  try {
    await within(opened, 'SubscribeToTask');
    if (ended) {
      await reading.catch(() => undefined);
      results.skip(
        'CMD-8',
        title,
        'the server ended the subscription of an idle task at once, so no stream was open',
        transport,
      );
      return;
    }
    await sendBlocking(client, userMessage(commandText(probe), { taskId: task.id, contextId: task.contextId }));
    await within(reading, 'the subscription', 5_000).catch(() => undefined);
    results.judge(
      'CMD-8',
      title,
      received ? undefined : 'the command was answered, but the open subscription did not receive the reply',
      transport,
    );
  } catch (error) {
    results.fail('CMD-8', title, describe(error), transport);
  } finally {
    abort.abort();
    await reading.catch(() => undefined);
  }
}

/** CMD-6: after the commands, the task is in the state it was, and its metadata has no command keys. */
async function checkUntouched(
  probe: Probe,
  transport: TransportName,
  client: Client,
  task: Task,
  state: TaskState | undefined,
): Promise<void> {
  const { results } = probe;
  try {
    const now = await within(client.getTask({ tenant: '', id: task.id, historyLength: 0 }), 'GetTask');
    const leaked = ['command', 'task_ref'].filter((key) => key in (now.metadata ?? {}));
    results.judge(
      'CMD-6',
      "commands leave the task's state as it was",
      now.status?.state === state
        ? undefined
        : `the task is ${TaskState[now.status?.state ?? 0]}, it was ${TaskState[state ?? 0]}`,
      transport,
    );
    results.judge(
      'CMD-6',
      "the task's metadata gains no command keys",
      leaked.length ? `Task.metadata has ${leaked.join(' and ')}` : undefined,
      transport,
    );
  } catch (error) {
    results.fail(
      'CMD-6',
      "commands leave the task's state and metadata as they were",
      `GetTask failed: ${describe(error)}`,
      transport,
    );
  }
}

/** CMD-13: the same messageId sent again is not run again: the first reply comes back. */
async function checkResend(probe: Probe, transport: TransportName, client: Client, task: Task): Promise<void> {
  const { results } = probe;
  const title = 'a command resent with the same messageId is not run again';
  const messageId = randomUUID();
  const message = () => userMessage(commandText(probe), { taskId: task.id, contextId: task.contextId, messageId });
  try {
    const first = await sendBlocking(client, message());
    let again: SendMessageResult;
    try {
      again = await sendBlocking(client, message());
    } catch (error) {
      results.skip(
        'CMD-13',
        title,
        `the resend was refused (${describe(error)}), so whether it would run again cannot be seen`,
        transport,
      );
      return;
    }
    const firstReply = isTask(first) ? first.status?.message?.messageId : undefined;
    const againReply = isTask(again) ? again.status?.message?.messageId : undefined;
    results.judge(
      'CMD-13',
      title,
      firstReply && firstReply === againReply
        ? undefined
        : `the resend got another reply (message ${againReply}, the first was ${firstReply}): it ran again`,
      transport,
    );
  } catch (error) {
    results.fail('CMD-13', title, describe(error), transport);
  }
}

/** CMD-11: a command to a canceled task is refused with UnsupportedOperationError. */
async function checkFinished(probe: Probe, transport: TransportName, client: Client): Promise<void> {
  const { results } = probe;
  const title = 'a command to a finished task is refused (UnsupportedOperationError)';
  let task: Task;
  try {
    const result = await sendBlocking(client, userMessage(commandText(probe)));
    if (!isTask(result)) return results.skip('CMD-11', title, 'no task to finish', transport);
    task = result;
    probe.created.add(task.id);
    await within(client.cancelTask({ tenant: '', id: task.id, metadata: {} }), 'CancelTask');
  } catch (error) {
    return results.skip('CMD-11', title, `a task could not be canceled to finish it (${describe(error)})`, transport);
  }
  try {
    await sendBlocking(client, userMessage(commandText(probe), { taskId: task.id, contextId: task.contextId }));
    results.fail('CMD-11', title, 'the command to the canceled task was answered', transport);
  } catch (error) {
    results.judge(
      'CMD-11',
      title,
      error instanceof UnsupportedOperationError ? undefined : `refused, but with ${describe(error)}`,
      transport,
    );
  }
}
