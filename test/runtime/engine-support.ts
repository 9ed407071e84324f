import { Role, TaskState, type Message, type StreamResponse, type Task } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutionEvent, type ServerCallContext } from '@a2a-js/sdk/server';
import { TaskEngine, type TaskEngineOptions } from '../../src/runtime/engine.js';
import type { TurnRequest, TurnResult } from '../../src/runtime/executor.js';
import { statusUpdate } from '../../src/runtime/events.js';
import { LocalCoordination } from '../../src/coordination/local-coordination.js';
import type { TurnPublisher } from '../../src/runtime/turn/turn-opening.js';
import type { Turn } from '../../src/engine-ports.js';
import type { Store } from '../../src/store/index.js';
import { message, textPart } from '../store/helpers.js';

/** What runs a turn, as the engine calls it (`HarnessExecutor.run`). */
export interface ScriptedExecutor {
  run(request: TurnRequest, turn: Turn, publisher: TurnPublisher): Promise<TurnResult>;
}

/**
 * A task engine of one process (`LocalCoordination`) on a real store and its log readers,
 * running turns with `executor`; `options` replace any part.
 */
export function localEngine(
  store: Pick<Store, 'tasks' | 'feeds' | 'subtasks' | 'state'>,
  executor: ScriptedExecutor = scripted(),
  options: Partial<TaskEngineOptions> = {},
): TaskEngine {
  const engine = new TaskEngine({
    coordination: new LocalCoordination(),
    store: store.tasks,
    feeds: store.feeds,
    subtasks: store.subtasks,
    links: store.state,
    onError: () => {},
    ...options,
  });
  engine.runTurnsWith(executor);
  return engine;
}

/** The task event a turn opens with, as the executor publishes it: a continued task carries only the new message. */
export function openingTask(request: TurnRequest): AgentExecutionEvent {
  const { taskId, contextId, userMessage, task } = request;
  const status = { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() };
  const opened: Task = task
    ? { ...task, history: [userMessage], artifacts: [], metadata: {}, status }
    : { id: taskId, contextId, status, history: [userMessage], artifacts: [], metadata: {} };
  return AgentEvent.task(opened);
}

export interface Script {
  /** Awaited after the opening (task, WORKING) and before the reply: holds the turn open. */
  hold?: (request: TurnRequest, turn: Turn) => Promise<void>;
  /** The state the turn ends in (default INPUT_REQUIRED); a canceled turn ends CANCELED. */
  endState?: TaskState;
  /** Told of every turn, as it starts. */
  started?: (request: TurnRequest, turn: Turn) => void;
}

/**
 * A small executor: publishes the task and WORKING, then (after `hold`) an artifact with the
 * reply, and ends with the reply as its final status, CANCELED when the turn was canceled.
 */
export function scripted(script: Script = {}): ScriptedExecutor {
  return {
    async run(request, turn, publisher) {
      const { taskId, contextId } = request;
      script.started?.(request, turn);
      publisher.publish(openingTask(request));
      publisher.publish(AgentEvent.statusUpdate(statusUpdate(taskId, contextId, TaskState.TASK_STATE_WORKING)));
      await script.hold?.(request, turn);
      const reason = turn.abort.signal.reason as Error | undefined;
      if (reason?.name === 'TurnFenced') return {};
      if (reason?.name === 'TurnCanceled') {
        const canceled = message(taskId, contextId, Role.ROLE_AGENT, 'The turn was canceled.');
        return { final: statusUpdate(taskId, contextId, TaskState.TASK_STATE_CANCELED, canceled) };
      }
      const text = `reply to ${textOfMessage(request.userMessage)}`;
      publisher.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: {
            artifactId: `a-${turn.epoch}`,
            name: 'reply',
            description: '',
            parts: [textPart(text)],
            metadata: {},
            extensions: [],
          },
          append: false,
          lastChunk: true,
          metadata: {},
        }),
      );
      const reply = message(taskId, contextId, Role.ROLE_AGENT, text);
      return { final: statusUpdate(taskId, contextId, script.endState ?? TaskState.TASK_STATE_INPUT_REQUIRED, reply) };
    },
  };
}

/** A turn as the engine hands it to the executor, for tests of the executor alone. */
export function turnOf(taskId: string, context: ServerCallContext): Turn & { context: ServerCallContext } {
  return { taskId, epoch: 1, abort: new AbortController(), context };
}

/** A promise and what resolves it: a gate a scripted turn waits at. */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

export function textOfMessage(message: Message | undefined): string {
  return (message?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
}

/** Reads a stream to its end. */
export async function readAll(stream: AsyncGenerator<StreamResponse, void, undefined>): Promise<StreamResponse[]> {
  const items: StreamResponse[] = [];
  for await (const item of stream) items.push(item);
  return items;
}

/** A stream's items as kinds, a status by its state: `task`, `WORKING`, `artifact`, `INPUT_REQUIRED`... */
export function kinds(items: readonly StreamResponse[]): string[] {
  return items.map(({ payload }) => {
    if (payload?.$case === 'statusUpdate') return TaskState[payload.value.status!.state].replace('TASK_STATE_', '');
    if (payload?.$case === 'artifactUpdate') return 'artifact';
    return payload?.$case ?? 'none';
  });
}

/** A user's message on `task` (a new task when none). */
export function userMessage(text: string, task?: Pick<Task, 'id' | 'contextId'>): Message {
  return message(task?.id ?? '', task?.contextId ?? '', Role.ROLE_USER, text);
}
