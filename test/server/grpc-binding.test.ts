/**
 * Issue 36, "own the wire edge": the gRPC binding is the project's own (src/server/grpc-binding.ts).
 * Each call's context is a plain value built from the call (user, extensions, version, tenant,
 * `last-event-id`, trace carrier, the "client gone" signal on the call's `cancelled`), the call
 * runs through the composed path it is given, the extensions it activated come back in its
 * metadata, a stream ends on the client's cancel, and every answer leaves through `encodeFor`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { credentials, makeGenericClientConstructor, Metadata, type ServiceError } from '@grpc/grpc-js';
import { StreamResponse, Task, TaskState, type GetTaskRequest } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { clientGoneSignal, compose, LAST_EVENT_ID_KEY, type Call, type Outcome } from '../../src/a2a/index.js';
import { encodeFor } from '../../src/server/grpc-binding.js';
import { GENERATION_KEY } from '../../src/wire.js';
import { startGrpcServer, type RunningGrpcServer } from '../../src/server/grpc-server.js';
import { TRACE_CARRIER_KEY } from '../../src/telemetry/propagation.js';

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

const task = (id: string): Task => ({
  id,
  contextId: 'c-1',
  status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: undefined },
  artifacts: [],
  history: [],
  metadata: {},
});

/** The calls the path saw, and what tells when a streamed call's client went away. */
const seen: Call[] = [];
let streamLeft: (reason: unknown) => void = () => {};
const streamGone = new Promise<unknown>((resolve) => (streamLeft = resolve));
/** Whether a unary call's client-gone signal had fired while the path ran it (undefined: it had none). */
let goneWhileRunning: boolean | undefined;

/** The terminal of the path: answers GetTask, and streams one event then waits for its client to go. */
function terminal(call: Call): Outcome {
  seen.push(call);
  if (call.method === 'getTask') {
    goneWhileRunning = clientGoneSignal(call.context)?.aborted;
    call.context.addActivatedExtension('https://example.test/ext');
    return Promise.resolve(task((call.params as GetTaskRequest).id));
  }
  if (call.method === 'resubscribe') return streamUntilGone(call.context);
  return Promise.reject(new Error('not in this test'));
}

async function* streamUntilGone(context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
  yield { payload: { $case: 'task', value: task('t-stream') } };
  const signal = clientGoneSignal(context)!;
  const reason = await new Promise((resolve) =>
    signal.aborted ? resolve(signal.reason) : signal.addEventListener('abort', () => resolve(signal.reason)),
  );
  streamLeft(reason);
}

let grpc: RunningGrpcServer;
let client: any;

before(async () => {
  grpc = await startGrpcServer(compose([], terminal), '127.0.0.1', 0);
  const Client = makeGenericClientConstructor(A2AService, 'A2AService');
  client = new Client(grpc.address, credentials.createInsecure());
});

after(async () => {
  client?.close();
  await grpc?.close();
});

function metadata(): Metadata {
  const m = new Metadata();
  m.set('a2a-version', '1.0');
  m.set('a2a-extensions', 'https://example.test/ext, https://example.test/other');
  m.set('last-event-id', '7');
  m.set('traceparent', TRACEPARENT);
  return m;
}

describe('the gRPC binding (issue 36)', () => {
  it("builds the call's context from the call and runs it through the path; its activated extensions come back", async () => {
    let headers: string[] = [];
    const answer = await new Promise<Task>((resolve, reject) => {
      const call = client.getTask(
        { tenant: 'acme', id: 't-1' },
        metadata(),
        (error: ServiceError | null, value: Task) => (error ? reject(error) : resolve(value)),
      );
      call.on('metadata', (received: Metadata) => (headers = received.get('a2a-extensions').map(String)));
    });
    assert.equal(answer.id, 't-1');
    assert.deepEqual(headers, ['https://example.test/ext']);
    const { context, streaming } = seen.at(-1)!;
    assert.equal(streaming, false);
    assert.equal(context.requestedVersion, '1.0');
    assert.deepEqual(context.requestedExtensions, ['https://example.test/ext', 'https://example.test/other']);
    assert.equal(context.tenant, 'acme');
    assert.equal(context.user?.isAuthenticated, false);
    assert.equal(context.state.get(LAST_EVENT_ID_KEY), '7');
    assert.deepEqual(context.state.get(TRACE_CARRIER_KEY), { traceparent: TRACEPARENT });
    assert.equal(goneWhileRunning, false, 'a unary call carries its signal too, not fired while it runs');
  });

  it('writes each event of a stream, and the client-gone signal fires when the client cancels', async () => {
    const call = client.subscribeToTask({ tenant: '', id: 't-stream' }, metadata());
    call.on('error', () => {}); // the cancel ends the client's side with CANCELLED
    const [first] = (await new Promise((resolve) =>
      call.once('data', (event: StreamResponse) => resolve([event])),
    )) as [StreamResponse];
    assert.equal(first.payload?.$case, 'task');
    assert.equal(seen.at(-1)!.streaming, true);
    call.cancel();
    assert.equal(typeof (await streamGone), 'string', 'the stream below ended on the signal');
  });

  it("encodeFor is the SDK's encoder, unchanged, for A2A 1.0", () => {
    const event: StreamResponse = { payload: { $case: 'task', value: task('t-2') } };
    const { responseSerialize, responseDeserialize } = A2AService.subscribeToTask;
    const encode = responseSerialize as (message: unknown) => Buffer;
    assert.deepEqual(encodeFor('1.0', 'resubscribe', encode, event), encode(event));
    assert.deepEqual(responseDeserialize(encodeFor('1.0', 'resubscribe', encode, event)), event);
  });

  it("issue 36: encodeFor adds A2A 1.1's generation to a 1.1 call's task or event, which a 1.0 decoder reads past", () => {
    const value = { ...task('t-3'), metadata: { [GENERATION_KEY]: 4 } };
    const event: StreamResponse = { payload: { $case: 'task', value } };
    const { responseSerialize, responseDeserialize } = A2AService.subscribeToTask;
    const encode = responseSerialize as (message: unknown) => Buffer;
    const bytes = encodeFor('1.1', 'resubscribe', encode, event);
    assert.ok(bytes.length > encode(event).length, 'the field is there');
    assert.deepEqual(responseDeserialize(bytes), event);
    assert.deepEqual(encodeFor('1.1', 'listTaskPushNotificationConfigs', encode, event), encode(event), 'no task here');
  });
});
