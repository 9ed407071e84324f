/**
 * `send --if-generation N`: a message sent only if its task is still at generation N, A2A 1.1's
 * `ifGenerationMatch` (issue 36). The SDK's client speaks 1.0 and drops the field, so this one
 * call is JSON-RPC written here, with `A2A-Version: 1.1`, to the card's 1.1 JSON-RPC interface.
 */
import {
  A2A_VERSION_HEADER,
  AgentCard,
  SendMessageRequest,
  SendMessageResponse,
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
  const url = generationsInterface(card);
  if (!url) throw new Error(`the agent does not speak A2A ${GENERATIONS_VERSION}, which --if-generation needs`);
  const params = SendMessageRequest.toJSON(request) as Record<string, unknown>;
  const configuration = (params.configuration ?? {}) as Record<string, unknown>;
  // An int64 in ProtoJSON: a decimal string.
  params.configuration = { ...configuration, ifGenerationMatch: String(generation) };
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', [A2A_VERSION_HEADER]: GENERATIONS_VERSION },
    body: JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method: 'SendMessage', params }),
  });
  const body = (await response.json()) as {
    result?: unknown;
    error?: { code: number; message: string; data?: { metadata?: Record<string, string> }[] };
  };
  if (body.error?.code === GENERATION_MISMATCH_CODE) {
    const current = Number(body.error.data?.find((detail) => detail.metadata)?.metadata?.currentGeneration);
    throw new TaskMovedOn(generation, Number.isSafeInteger(current) ? current : undefined);
  }
  if (body.error) throw fromJsonRpcErrorResponse(body as Parameters<typeof fromJsonRpcErrorResponse>[0]);
  const result = SendMessageResponse.fromJSON(body.result).payload;
  if (!result) throw new Error(`${url} answered SendMessage with neither a task nor a message`);
  return result.value;
}
