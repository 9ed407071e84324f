/**
 * A2A 1.1's generation fields in the JSON bindings (JSON-RPC and HTTP+JSON), for the call's
 * version: read from a request's params, written on a response. The SDK's types are 1.0's and
 * have none of them; a binding takes the fields from the raw JSON before the SDK's decoders drop
 * them, puts them on the call's params (`GenerationParams`), and adds `generation` to the JSON it
 * writes. For a 1.0 call both are no-ops: it sees what it always saw (issue 36).
 */
import type { StreamResponse, Task } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { GENERATIONS_VERSION } from '../wire.js';
import { generationOf } from './generations.js';
import type { CallMethod } from './steps.js';

/** The 1.1 fields a binding puts on a call's params, as the draft names them in JSON. */
export type GenerationParams = {
  /** `GetTaskRequest.currentGeneration`: answer once the task's generation is past it. */
  currentGeneration?: number;
  /** `SendMessageConfiguration.ifGenerationMatch`: refuse unless it is the task's generation. */
  ifGenerationMatch?: number;
};

/**
 * The 1.1 fields of a call's raw JSON params (JSON-RPC `params`; HTTP+JSON's body, with the
 * query parameters of a GET): `currentGeneration` of `GetTask`, `configuration.ifGenerationMatch`
 * of either send. Empty for any other version or method. An int64 in ProtoJSON is a decimal
 * string or a number; anything else is a malformed request.
 */
export function requestFieldsOf(
  version: string,
  method: CallMethod,
  params: Record<string, unknown>,
): Record<string, unknown> {
  if (version !== GENERATIONS_VERSION) return {};
  if (method === 'getTask') return present('currentGeneration', params.currentGeneration);
  if (method === 'sendMessage' || method === 'sendMessageStream') {
    const configuration = params.configuration;
    if (configuration === null || typeof configuration !== 'object') return {};
    return present('ifGenerationMatch', (configuration as Record<string, unknown>).ifGenerationMatch);
  }
  return {};
}

function present(name: keyof GenerationParams, value: unknown): GenerationParams {
  return value === undefined || value === null ? {} : { [name]: int64Of(name, value) };
}

/** An int64 in ProtoJSON: a number or a decimal string; refused beyond what a number holds exactly. */
export function int64Of(name: string, value: unknown): number {
  const number = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isSafeInteger(number))
    throw new RequestMalformedError(`${name} must be a whole number (an int64), not ${JSON.stringify(value)}.`);
  return number;
}

/** The key of the JSON object a stream item's payload is in (`StreamResponse`, `SendMessageResponse`). */
const PAYLOAD_KEYS = { task: 'task', statusUpdate: 'statusUpdate', artifactUpdate: 'artifactUpdate' } as const;

/**
 * `json`, the JSON form of `item`, with the item's generation as its `generation` field when the
 * call speaks 1.1: on a Task (`GetTask`, `CancelTask`), or on the task, status update or artifact
 * update inside a `StreamResponse` or `SendMessageResponse`. A message, an item without a
 * generation, and every 1.0 answer are `json` as it is. The value is a decimal string, as
 * ProtoJSON writes an int64 (spec/stream-resume-extension-v1.md, "A2A 1.1 generations").
 */
export function responseJsonFor(version: string, json: unknown, item: StreamResponse | Task): unknown {
  if (version !== GENERATIONS_VERSION || json === null || typeof json !== 'object') return json;
  const [key, generation] = isStreamItem(item) ? streamItem(item) : [undefined, taskGeneration(item)];
  if (generation === undefined) return json;
  const object = json as Record<string, unknown>;
  const inner = key === undefined ? undefined : object[key];
  if (key !== undefined && inner !== null && typeof inner === 'object')
    return { ...object, [key]: { ...inner, generation: String(generation) } };
  // The item's own JSON, not wrapped (a Task, or an event written alone).
  return { ...object, generation: String(generation) };
}

/** Whether `item` is a stream item rather than a Task (a Task has no `payload`). */
export function isStreamItem(item: StreamResponse | Task): item is StreamResponse {
  return 'payload' in item;
}

function streamItem(item: StreamResponse): [key: string | undefined, generation: number | undefined] {
  const $case = item.payload?.$case;
  if ($case !== 'task' && $case !== 'statusUpdate' && $case !== 'artifactUpdate') return [undefined, undefined];
  return [PAYLOAD_KEYS[$case], generationOf(item)];
}

function taskGeneration(task: Task): number | undefined {
  return generationOf({ payload: { $case: 'task', value: task } });
}
