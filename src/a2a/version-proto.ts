/**
 * A2A 1.1's generation fields in the gRPC binding, on the wire bytes: the SDK's generated
 * encoders and decoders are 1.0's, which have none of them and drop what they do not know. The
 * field numbers are the draft's (`specification/a2a.proto`, branch `dev-1.1`). For a 1.0 call
 * both directions are no-ops (issue 36).
 */
import type { StreamResponse, Task } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { GENERATIONS_VERSION } from '../wire.js';
import { generationOf } from './generations.js';
import type { CallMethod } from './steps.js';
import { isStreamItem, type GenerationParams } from './version-fields.js';

/** `int64 generation` of `Task` (7), `TaskStatusUpdateEvent` (5) and `TaskArtifactUpdateEvent` (7). */
const GENERATION_FIELD = { task: 7, statusUpdate: 5, artifactUpdate: 7 } as const;
/** The payload's field in `StreamResponse` (and, for a task, `SendMessageResponse`: also 1). */
const PAYLOAD_FIELD = { task: 1, statusUpdate: 3, artifactUpdate: 4 } as const;
/** `GetTaskRequest.current_generation`. */
const CURRENT_GENERATION = 4;
/** `SendMessageRequest.configuration`, and in it `SendMessageConfiguration.if_generation_match`. */
const CONFIGURATION = 3;
const IF_GENERATION_MATCH = 5;

type GenerationCarrier = keyof typeof GENERATION_FIELD;

/** `encoded` (a Task, status update or artifact update) with its `generation` field appended. */
export function withGenerationField(encoded: Uint8Array, kind: GenerationCarrier, generation: number): Uint8Array {
  const field = new BinaryWriter().tag(GENERATION_FIELD[kind], WireType.Varint).int64(generation).finish();
  return concat([encoded, field]);
}

/**
 * The encoded response for a 1.1 call with the item's generation in it: `encoded` is the SDK's
 * encoding of `item` itself when it is a Task (`GetTask`, `CancelTask`), or of the
 * `StreamResponse` (or `SendMessageResponse`) around it, whose payload gets the field. A message,
 * an item without a generation, and a 1.0 call's answer are `encoded` as it is.
 */
export function responseProtoFor(version: string, encoded: Uint8Array, item: StreamResponse | Task): Uint8Array {
  if (version !== GENERATIONS_VERSION) return encoded;
  if (!isStreamItem(item)) {
    const generation = generationOf({ payload: { $case: 'task', value: item } });
    return generation === undefined ? encoded : withGenerationField(encoded, 'task', generation);
  }
  const kind = item.payload?.$case;
  const generation = generationOf(item);
  if ((kind !== 'task' && kind !== 'statusUpdate' && kind !== 'artifactUpdate') || generation === undefined)
    return encoded;
  const parts = fieldsOf(encoded).map((field) =>
    field.number === PAYLOAD_FIELD[kind] && field.contents
      ? new BinaryWriter()
          .tag(field.number, WireType.LengthDelimited)
          .bytes(withGenerationField(field.contents, kind, generation))
          .finish()
      : encoded.subarray(field.start, field.end),
  );
  return concat(parts);
}

/**
 * The 1.1 fields of a raw gRPC request, as a binding puts them on the call's params: the
 * `current_generation` of a `GetTaskRequest`, the `configuration.if_generation_match` of a
 * `SendMessageRequest`. Empty for any other version or method; the last occurrence of a field
 * wins, as protobuf's parsers take it.
 */
export function requestFieldsOfProto(version: string, method: CallMethod, bytes: Uint8Array): Record<string, unknown> {
  if (version !== GENERATIONS_VERSION) return {};
  const found: GenerationParams = {};
  if (method === 'getTask') {
    for (const field of fieldsOf(bytes))
      if (field.number === CURRENT_GENERATION && field.varint !== undefined)
        found.currentGeneration = int64('currentGeneration', field.varint);
  } else if (method === 'sendMessage' || method === 'sendMessageStream') {
    for (const field of fieldsOf(bytes)) {
      if (field.number !== CONFIGURATION || !field.contents) continue;
      for (const inner of fieldsOf(field.contents))
        if (inner.number === IF_GENERATION_MATCH && inner.varint !== undefined)
          found.ifGenerationMatch = int64('ifGenerationMatch', inner.varint);
    }
  }
  return found;
}

interface Field {
  number: number;
  /** Where the field, its tag included, starts and ends in the message. */
  start: number;
  end: number;
  /** A varint field's value. */
  varint?: bigint;
  /** A length-delimited field's contents. */
  contents?: Uint8Array;
}

/** The top-level fields of an encoded message, in order. */
function fieldsOf(bytes: Uint8Array): Field[] {
  const reader = new BinaryReader(bytes);
  const fields: Field[] = [];
  try {
    while (reader.pos < reader.len) {
      const start = reader.pos;
      const [number, wireType] = reader.tag();
      const field: Field = { number, start, end: start };
      if (wireType === WireType.Varint) field.varint = BigInt(reader.int64());
      else if (wireType === WireType.LengthDelimited) field.contents = reader.bytes();
      else reader.skip(wireType, number);
      field.end = reader.pos;
      fields.push(field);
    }
  } catch {
    throw new RequestMalformedError('The request is not a valid protobuf message.');
  }
  return fields;
}

/** An int64, refused beyond what a number holds exactly. */
function int64(name: string, value: bigint): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER))
    throw new RequestMalformedError(`${name} is beyond the generations this server counts to.`);
  return Number(value);
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((total, part) => total + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
