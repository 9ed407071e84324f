/**
 * A2A 1.1's generation fields in protobuf (issue 36), round-tripped with the SDK's generated
 * encoders (its gRPC service's serializers) and @bufbuild/protobuf's wire reader: `generation` (Task 7, TaskStatusUpdateEvent 5,
 * TaskArtifactUpdateEvent 7) written on a 1.1 answer, `current_generation` (GetTaskRequest 4)
 * and `configuration.if_generation_match` (SendMessageRequest 3, then 5) read from a 1.1 request.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { requestFieldsOfProto, responseProtoFor } from '../../src/a2a/version-proto.js';
import { GENERATION_KEY } from '../../src/wire.js';

/** The SDK's protobuf encoders and decoders, as its gRPC service has them. */
const codec = {
  task: { encode: A2AService.getTask.responseSerialize, decode: A2AService.getTask.responseDeserialize },
  stream: {
    encode: A2AService.sendStreamingMessage.responseSerialize,
    decode: A2AService.sendStreamingMessage.responseDeserialize,
  },
  send: A2AService.sendMessage.responseSerialize,
  getTaskRequest: A2AService.getTask.requestSerialize,
  sendRequest: A2AService.sendMessage.requestSerialize,
};
const buffer = (bytes: Uint8Array) => Buffer.from(bytes);

const task: Task = {
  id: 't-1',
  contextId: 'c-1',
  status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: undefined },
  artifacts: [],
  history: [],
  metadata: { [GENERATION_KEY]: 300 },
};
const status: StreamResponse = {
  payload: {
    $case: 'statusUpdate',
    value: { taskId: 't-1', contextId: 'c-1', status: task.status, metadata: { [GENERATION_KEY]: 6 } },
  },
};
const artifact: StreamResponse = {
  payload: {
    $case: 'artifactUpdate',
    value: {
      taskId: 't-1',
      contextId: 'c-1',
      artifact: { artifactId: 'a', name: '', description: '', parts: [], metadata: undefined, extensions: [] },
      append: false,
      lastChunk: true,
      metadata: { [GENERATION_KEY]: 7 },
    },
  },
};

/** The varint field `number` of an encoded message, read as the 1.1 schema's own decoder would. */
function int64Field(bytes: Uint8Array, number: number): bigint | undefined {
  const reader = new BinaryReader(bytes);
  let found: bigint | undefined;
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === number && wireType === WireType.Varint) found = BigInt(reader.int64());
    else reader.skip(wireType, field);
  }
  return found;
}

/** The contents of the length-delimited field `number`. */
function messageField(bytes: Uint8Array, number: number): Uint8Array {
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === number && wireType === WireType.LengthDelimited) return reader.bytes();
    reader.skip(wireType, field);
  }
  throw new Error(`no field ${number}`);
}

describe('A2A 1.1 generation written on protobuf answers (issue 36)', () => {
  it('a Task gets field 7; the SDK still decodes it as it was', () => {
    const written = responseProtoFor('1.1', codec.task.encode(task), task);
    assert.equal(int64Field(written, 7), 300n);
    assert.deepEqual(codec.task.decode(buffer(written)), task);
  });

  it('inside a StreamResponse: the task (7), status update (5), artifact update (7)', () => {
    const wrapped: StreamResponse = { payload: { $case: 'task', value: task } };
    for (const [item, payloadField, generationField, generation] of [
      [wrapped, 1, 7, 300n],
      [status, 3, 5, 6n],
      [artifact, 4, 7, 7n],
    ] as const) {
      const encoded = codec.stream.encode(item);
      const written = responseProtoFor('1.1', encoded, item);
      assert.equal(int64Field(messageField(written, payloadField), generationField), generation);
      assert.deepEqual(codec.stream.decode(buffer(written)), codec.stream.decode(encoded));
    }
  });

  it("inside a SendMessageResponse's task (field 1)", () => {
    const encoded = codec.send({ payload: { $case: 'task', value: task } });
    const written = responseProtoFor('1.1', encoded, { payload: { $case: 'task', value: task } });
    assert.equal(int64Field(messageField(written, 1), 7), 300n);
  });

  it('a 1.0 answer, and an item without a generation, are the bytes as given', () => {
    const encoded = codec.task.encode(task);
    assert.equal(responseProtoFor('1.0', encoded, task), encoded);
    const bare = { ...task, metadata: {} };
    const bareBytes = codec.task.encode(bare);
    assert.equal(responseProtoFor('1.1', bareBytes, bare), bareBytes);
  });
});

describe('A2A 1.1 generation fields read from protobuf requests (issue 36)', () => {
  const getTask = codec.getTaskRequest({ tenant: '', id: 't-1', historyLength: 2 });
  const send = codec.sendRequest({
    tenant: '',
    message: undefined,
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: undefined,
      historyLength: undefined,
      returnImmediately: false,
    },
    metadata: undefined,
  });
  const withField = (bytes: Uint8Array, number: number, value: number) =>
    new Uint8Array([...bytes, ...new BinaryWriter().tag(number, WireType.Varint).int64(value).finish()]);

  it('GetTaskRequest.current_generation (4)', () => {
    assert.deepEqual(requestFieldsOfProto('1.1', 'getTask', withField(getTask, 4, 5)), { currentGeneration: 5 });
    assert.deepEqual(requestFieldsOfProto('1.1', 'getTask', withField(getTask, 4, 0)), { currentGeneration: 0 });
    assert.deepEqual(requestFieldsOfProto('1.1', 'getTask', getTask), {});
  });

  it('SendMessageRequest.configuration.if_generation_match (3, then 5)', () => {
    const configuration = new BinaryWriter().tag(5, WireType.Varint).int64(8).finish();
    const request = new Uint8Array([
      ...send,
      ...new BinaryWriter().tag(3, WireType.LengthDelimited).bytes(configuration).finish(),
    ]);
    for (const method of ['sendMessage', 'sendMessageStream'] as const)
      assert.deepEqual(requestFieldsOfProto('1.1', method, request), { ifGenerationMatch: 8 });
    assert.deepEqual(requestFieldsOfProto('1.1', 'sendMessage', send), {});
    // A top-level field 5 is not the configuration's.
    assert.deepEqual(requestFieldsOfProto('1.1', 'sendMessage', withField(send, 5, 8)), {});
  });

  it('a 1.0 request has none; bytes that are no protobuf are a malformed request', () => {
    assert.deepEqual(requestFieldsOfProto('1.0', 'getTask', withField(getTask, 4, 5)), {});
    assert.throws(
      () => requestFieldsOfProto('1.1', 'getTask', new Uint8Array([0x22, 0x09, 0x01])),
      RequestMalformedError,
    );
  });
});
