/**
 * A gRPC call that throws while the binding opens it (src/server/grpc-binding.ts, `opened`):
 * here the identity check itself fails, as a bug in it or in a library it calls would make it,
 * rather than refusing the token. The call still ends, with INTERNAL and the fixed message (the
 * failure is logged, never sent), unary and streamed alike, and it gives back its admission
 * place: at `maxRequestsInProgress` 1, each next call gets in.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  credentials,
  makeGenericClientConstructor,
  Metadata,
  status,
  type Client,
  type ServiceError,
} from '@grpc/grpc-js';
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { compose, type Call, type Outcome } from '../../src/a2a/index.js';
import type { Logger } from '../../src/log.js';
import { INTERNAL_ERROR_MESSAGE } from '../../src/server/a2a-errors.js';
import { Admission } from '../../src/server/admission.js';
import { TokenAuthenticator } from '../../src/server/auth.js';
import { Authenticator, type Authentication } from '../../src/server/authentication.js';
import { startGrpcServer, type RunningGrpcServer } from '../../src/server/grpc-server.js';

const TOKEN = 'token-of-alice';

/** The tokens file's check, which throws (not refuses) while `broken`: what the binding must survive. */
class BreakingAuthenticator extends Authenticator {
  broken = true;

  override authenticate(header: string | string[] | undefined): Promise<Authentication> {
    if (this.broken) return Promise.reject(new TypeError("Cannot read properties of undefined (reading 'digest')"));
    return super.authenticate(header);
  }
}

const task = (id: string): Task => ({
  id,
  contextId: 'c-1',
  status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: undefined },
  artifacts: [],
  history: [],
  metadata: {},
});

/** The calls that reached the path: none of those whose opening failed. */
const reached: string[] = [];

function terminal(call: Call): Outcome {
  reached.push(call.method);
  if (call.method === 'getTask') return Promise.resolve(task('t-1'));
  if (call.method === 'resubscribe') return oneEvent();
  return Promise.reject(new Error('not in this test'));
}

async function* oneEvent(): AsyncGenerator<StreamResponse, void, undefined> {
  yield { payload: { $case: 'task', value: task('t-stream') } };
}

const errors: { message: string; fields?: Record<string, unknown> }[] = [];
const ended: unknown[] = [];
const log: Logger = {
  debug() {},
  info: (message, fields) => {
    if (message === 'grpc call') ended.push(fields?.code);
  },
  warn() {},
  error: (message, fields) => errors.push({ message, fields }),
};

const admission = new Admission({
  maxRequestsInProgress: 1,
  maxEventLoopDelayMs: 0,
  eventLoopCheckFrom: 0,
  eventLoopDelayMs: () => 0,
});
const authenticator = new BreakingAuthenticator(new TokenAuthenticator(new Map([[TOKEN, 'alice']])));
let grpc: RunningGrpcServer;
let client: Client & Record<string, any>;

before(async () => {
  grpc = await startGrpcServer(compose([], terminal), '127.0.0.1', 0, { log, authenticator, admission });
  const Constructor = makeGenericClientConstructor(A2AService, 'A2AService');
  client = new Constructor(grpc.address, credentials.createInsecure()) as Client & Record<string, any>;
});

after(async () => {
  client?.close();
  await grpc?.close();
});

function metadata(): Metadata {
  const m = new Metadata();
  m.set('a2a-version', '1.0');
  m.set('authorization', `Bearer ${TOKEN}`);
  return m;
}

/** A unary GetTask: its error, or the task's id. */
function getTask(): Promise<{ error: ServiceError } | { id: string }> {
  return new Promise((resolve) =>
    client.getTask({ tenant: '', id: 't-1' }, metadata(), (error: ServiceError | null, value: Task) =>
      resolve(error ? { error } : { id: value.id }),
    ),
  );
}

/** A streamed SubscribeToTask: the error it ended with, or the events it carried. */
function subscribe(): Promise<{ error: ServiceError } | { events: number }> {
  return new Promise((resolve) => {
    let events = 0;
    const call = client.subscribeToTask({ tenant: '', id: 't-stream' }, metadata());
    call.on('data', () => events++);
    call.on('error', (error: ServiceError) => resolve({ error }));
    call.on('end', () => resolve({ events }));
  });
}

function assertInternal(answer: { error: ServiceError } | object): void {
  assert.ok('error' in answer, 'the call ended with an error');
  assert.equal(answer.error.code, status.INTERNAL, answer.error.message);
  assert.equal(answer.error.details, INTERNAL_ERROR_MESSAGE, 'the failure itself is not sent');
}

describe('a gRPC call that throws while it is opened', () => {
  it('a unary call ends INTERNAL, is logged, and gives back its place: the next calls get in at the bound', async () => {
    authenticator.broken = true;
    assertInternal(await getTask());
    assert.equal(admission.inProgress, 0, 'its place is given back');
    // At the bound of one call, a place kept would refuse this one UNAVAILABLE (requests_at_limit).
    assertInternal(await getTask());
    assert.equal(admission.inProgress, 0);
    assert.deepEqual(reached, [], 'neither reached the path');
    assert.deepEqual(
      errors.map((e) => [e.message, e.fields?.rpc, e.fields?.error]),
      [
        ['grpc call failed', 'GetTask', "TypeError: Cannot read properties of undefined (reading 'digest')"],
        ['grpc call failed', 'GetTask', "TypeError: Cannot read properties of undefined (reading 'digest')"],
      ],
    );
    assert.deepEqual(ended, ['INTERNAL', 'INTERNAL'], 'each call is logged once, with its status');

    authenticator.broken = false;
    assert.deepEqual(await getTask(), { id: 't-1' });
    assert.deepEqual(reached, ['getTask']);
    assert.equal(admission.inProgress, 0);
  });

  it('a streamed call ends INTERNAL too, and gives back its place', async () => {
    authenticator.broken = true;
    reached.length = 0;
    assertInternal(await subscribe());
    assert.equal(admission.inProgress, 0, 'its place is given back');
    assertInternal(await subscribe());
    assert.deepEqual(reached, []);

    authenticator.broken = false;
    assert.deepEqual(await subscribe(), { events: 1 });
    assert.deepEqual(reached, ['resubscribe']);
    assert.equal(admission.inProgress, 0);
  });
});
