/**
 * What the answer to each A2A 1.0 call must be, on any binding: the message type the service
 * definition of `a2a.proto` returns, the rules the request's parameters set for it (spec 3.1,
 * 3.2.4) and, for a stream, the order its events must come in (spec 3.1.2, 3.1.6). Values are
 * in the JSON form; a gRPC answer is converted to it first, with `binary` set.
 */
import type { z } from 'zod';
import { AgentCard } from './a2a-card-schema.js';
import {
  listTasksResponse,
  SendMessageResponse,
  StreamResponse,
  Task,
  TaskPushNotificationConfig,
  violations,
} from './a2a-schema.js';

export type A2AMethod =
  | 'SendMessage'
  | 'SendStreamingMessage'
  | 'GetTask'
  | 'ListTasks'
  | 'CancelTask'
  | 'SubscribeToTask'
  | 'CreateTaskPushNotificationConfig'
  | 'GetTaskPushNotificationConfig'
  | 'ListTaskPushNotificationConfigs'
  | 'DeleteTaskPushNotificationConfig'
  | 'GetExtendedAgentCard'
  | 'AgentCard';

/** One call as far as its answer depends on it. `AgentCard` is the well-known card document. */
export interface A2ACall {
  method: A2AMethod;
  /** `historyLength` (SendMessage: `configuration.historyLength`), `includeArtifacts`, `pageSize`. */
  params: { historyLength?: number; includeArtifacts?: boolean; pageSize?: number };
}

export const STREAMING_METHODS: ReadonlySet<A2AMethod> = new Set(['SendStreamingMessage', 'SubscribeToTask']);

/** The answer's message type, per `service A2AService` of a2a.proto. */
function answerSchema(method: A2AMethod, binary: boolean): z.ZodType | undefined {
  switch (method) {
    case 'SendMessage':
      return SendMessageResponse;
    case 'GetTask':
    case 'CancelTask':
      return Task;
    case 'ListTasks':
      return listTasksResponse(!binary);
    case 'CreateTaskPushNotificationConfig':
    case 'GetTaskPushNotificationConfig':
      return TaskPushNotificationConfig;
    case 'GetExtendedAgentCard':
    case 'AgentCard':
      return AgentCard;
    case 'SendStreamingMessage':
    case 'SubscribeToTask':
      return StreamResponse;
    default:
      return undefined; // Delete: google.protobuf.Empty; List configs: not used by the harness's tests.
  }
}

type Json = Record<string, any>;

/** Everything wrong with the (non-streamed) answer `value` to `call`, one line each, rooted at `root`. */
export function answerViolations(call: A2ACall, value: unknown, root: string, binary = false): string[] {
  const schema = answerSchema(call.method, binary);
  if (!schema) return [];
  const problems = violations(schema, value, root);
  if (problems.length > 0) return problems;
  const answer = value as Json;
  const { historyLength, includeArtifacts, pageSize } = call.params;
  const tasks: [string, Json][] =
    call.method === 'ListTasks'
      ? (answer.tasks ?? []).map((task: Json, i: number) => [`${root}.tasks[${i}]`, task])
      : call.method === 'SendMessage'
        ? answer.task
          ? [[`${root}.task`, answer.task]]
          : []
        : [[root, answer]];
  if (call.method === 'SendMessage' || call.method === 'GetTask' || call.method === 'ListTasks') {
    for (const [path, task] of tasks) {
      // "The server MUST NOT return more messages than the provided value" (a2a.proto history_length).
      if (historyLength !== undefined && (task.history?.length ?? 0) > historyLength) {
        problems.push(
          `${path}.history: ${task.history.length} messages, more than historyLength ${historyLength} (a2a.proto history_length: "MUST NOT return more")`,
        );
      }
    }
  }
  if (call.method === 'ListTasks') {
    const limit = Math.min(pageSize ?? 50, 100);
    if (tasks.length > limit)
      problems.push(
        `${root}.tasks: ${tasks.length} tasks, more than the page size ${limit} (a2a.proto ListTasksRequest.page_size)`,
      );
    if (includeArtifacts !== true) {
      for (const [path, task] of tasks) {
        // Spec 3.1.4: without includeArtifacts "the artifacts field MUST be omitted entirely".
        if (task.artifacts !== undefined)
          problems.push(`${path}.artifacts: must be omitted when includeArtifacts is not true (spec 3.1.4)`);
      }
    }
  }
  return problems;
}

/**
 * The events of one stream, checked as they arrive: each a valid StreamResponse, the first a
 * Task (or, for SendStreamingMessage, the one Message of a message-only stream), no Message
 * after that (spec 3.1.2, 3.1.6), an `append` chunk only onto an artifact sent before, and
 * nothing more of an artifact after its `lastChunk` (a2a.proto TaskArtifactUpdateEvent).
 */
export class StreamCheck {
  private count = 0;
  private messageOnly = false;
  private readonly artifacts = new Set<string>();
  private readonly closed = new Set<string>();

  /** @param binding names the binding in the problems, e.g. ` (gRPC)`. */
  constructor(
    private readonly call: A2ACall,
    private readonly binding = '',
  ) {}

  /** The problems of the next event of the stream (empty when it is fine). */
  event(value: unknown): string[] {
    const root = `${this.call.method}${this.binding} event ${++this.count}`;
    const problems = violations(StreamResponse, value, root);
    if (problems.length > 0) return problems;
    const event = value as Json;
    if (this.messageOnly)
      return [
        `${root}: an event after the Message of a message-only stream (spec 3.1.2: "exactly one Message object and then close")`,
      ];
    if (this.count === 1) {
      if (event.message && this.call.method === 'SendStreamingMessage') {
        this.messageOnly = true;
        return [];
      }
      if (!event.task)
        return [
          `${root}: the first event must be a Task (spec ${this.call.method === 'SubscribeToTask' ? '3.1.6' : '3.1.2'}); got ${Object.keys(event).join(', ')}`,
        ];
    }
    if (event.message)
      return [
        `${root}: a Message in a task's stream, where only status and artifact updates follow the Task (spec 3.1.2)`,
      ];
    if (event.task) for (const artifact of event.task.artifacts ?? []) this.artifacts.add(artifact.artifactId);
    const update = event.artifactUpdate;
    if (update) {
      const id = update.artifact.artifactId;
      if (this.closed.has(id))
        problems.push(
          `${root}.artifactUpdate: artifact ${id} updated after its lastChunk (a2a.proto TaskArtifactUpdateEvent.last_chunk: "the final chunk")`,
        );
      if (update.append && !this.artifacts.has(id)) {
        problems.push(
          `${root}.artifactUpdate.append: appends to artifact ${id}, which was not sent before (a2a.proto TaskArtifactUpdateEvent.append: "appended to a previously sent artifact with the same ID")`,
        );
      }
      this.artifacts.add(id);
      if (update.lastChunk) this.closed.add(id);
    }
    return problems;
  }
}
