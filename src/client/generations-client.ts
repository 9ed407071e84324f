/**
 * The A2A 1.1 calls the command-line clients make (issue 36): a message sent only if its task is
 * still at generation N (`ifGenerationMatch`, `send --if-generation N`), and `GetTask` waiting
 * until a task moves past a generation (`currentGeneration`, following a sub-task). The SDK's
 * client speaks 1.0 and drops both fields, so these calls are JSON-RPC written here, with
 * `A2A-Version: 1.1`, to the card's 1.1 JSON-RPC interface.
 */
import {
  A2A_VERSION_HEADER,
  AgentCard,
  SendMessageRequest,
  SendMessageResponse,
  Task,
  type SendMessageResult,
} from '@a2a-js/sdk';
import { fromJsonRpcErrorResponse } from '@a2a-js/sdk/errors';
import { randomUUID } from 'node:crypto';
import { GENERATIONS_VERSION } from '../wire.js';

/** A2A 1.1's `TaskGenerationMismatchError` in JSON-RPC. */
const GENERATION_MISMATCH_CODE = -32010;

/** The refusal of a message sent on a generation the task has moved past. */
export class TaskMovedOn extends Error {
  constructor(
    readonly expected: number,
    readonly current: number | undefined,
  ) {
    super(
      `the task has moved on: generation now ${current ?? 'unknown'}, not ${expected}; read it again before sending`,
    );
    this.name = 'TaskMovedOn';
  }
}

/** The address of the card's JSON-RPC interface for A2A 1.1; undefined when the agent lists none. */
export function generationsInterface(card: AgentCard): string | undefined {
  return card.supportedInterfaces.find(
    (entry) => entry.protocolBinding.toUpperCase() === 'JSONRPC' && entry.protocolVersion === GENERATIONS_VERSION,
  )?.url;
}

/**
 * Sends `request` (a blocking `SendMessage`) with `configuration.ifGenerationMatch: generation`.
 * Rejects with {@link TaskMovedOn} when the task has moved on, with the SDK's A2A error for any
 * other refusal.
 */
export async function sendOnGeneration(
  card: AgentCard,
  headers: Record<string, string>,
  request: SendMessageRequest,
  generation: number,
): Promise<SendMessageResult> {
  const params = SendMessageRequest.toJSON(request) as Record<string, unknown>;
  const configuration = (params.configuration ?? {}) as Record<string, unknown>;
  // An int64 in ProtoJSON: a decimal string.
  params.configuration = { ...configuration, ifGenerationMatch: String(generation) };
  const body = await call(card, headers, 'SendMessage', params);
  if (body.error?.code === GENERATION_MISMATCH_CODE) {
    const current = Number(body.error.data?.find((detail) => detail.metadata)?.metadata?.currentGeneration);
    throw new TaskMovedOn(generation, Number.isSafeInteger(current) ? current : undefined);
  }
  const result = SendMessageResponse.fromJSON(resultOf(body)).payload;
  if (!result) throw new Error('the agent answered SendMessage with neither a task nor a message');
  return result.value;
}

/**
 * The task (without its history) once its generation is past `after`, or as it stands when the
 * agent stops waiting (its bound) or `signal` aborts the call.
 */
export async function getTaskPast(
  card: AgentCard,
  headers: Record<string, string>,
  id: string,
  after: number,
  signal: AbortSignal,
): Promise<Task> {
  const params = { tenant: '', id, historyLength: 0, currentGeneration: String(after) };
  return Task.fromJSON(resultOf(await call(card, headers, 'GetTask', params, signal)));
}

interface JsonRpcAnswer {
  result?: unknown;
  error?: { code: number; message: string; data?: { metadata?: Record<string, string> }[] };
}

async function call(
  card: AgentCard,
  headers: Record<string, string>,
  method: string,
  params: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<JsonRpcAnswer> {
  const url = generationsInterface(card);
  if (!url) throw new Error(`the agent does not speak A2A ${GENERATIONS_VERSION}`);
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', [A2A_VERSION_HEADER]: GENERATIONS_VERSION },
    body: JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, params }),
    signal,
  });
  return (await response.json()) as JsonRpcAnswer;
}

/** The answer's result; its error as the SDK's A2A error. */
function resultOf(body: JsonRpcAnswer): unknown {
  if (body.error) throw fromJsonRpcErrorResponse(body as Parameters<typeof fromJsonRpcErrorResponse>[0]);
  return body.result;
}
