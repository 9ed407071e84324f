import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as errors from '@a2a-js/sdk/errors';
import {
  A2AError,
  JsonRpcRequestMalformedError,
  RequestMalformedError,
  TaskNotFoundError,
  UnsupportedOperationError,
  VersionNotSupportedError,
} from '@a2a-js/sdk/errors';
import { buildGrpcErrorMetadata, decodeErrorInfo, decodeStatus, grpcStatusFor } from '@a2a-js/sdk/errors/grpc';
import { Metadata, status } from '@grpc/grpc-js';
import {
  compose,
  type Call,
  type CallMethod,
  type ComposedSteps,
  type Outcome,
  type Stream,
  type StreamingMethod,
} from '../../src/a2a/index.js';
import { generationMismatch, HarnessError, type HarnessErrorCode } from '../../src/errors.js';
import {
  errorMappingStep,
  INTERNAL_ERROR_MESSAGE,
  loadGrpcErrorForms,
  toA2AError,
  transportForms,
} from '../../src/server/a2a-errors.js';

/**
 * Every harness error code on each transport: the HTTP status a JSON-RPC answer is sent with,
 * its JSON-RPC code, the HTTP+JSON status and status name, the gRPC status, and the A2A
 * `ErrorInfo` reason the details carry (none for a refusal A2A has no error for). A `Record`, so
 * that a new code does not compile until it has its row.
 */
type Row = [
  jsonRpcHttp: number,
  jsonRpc: number,
  http: number,
  statusName: string,
  grpc: keyof typeof status,
  reason?: string,
];
const INTERNAL: Row = [200, -32603, 500, 'UNKNOWN', 'INTERNAL', 'INTERNAL_ERROR'];
const FORMS: Record<HarnessErrorCode, Row> = {
  task_not_found: [200, -32001, 404, 'NOT_FOUND', 'NOT_FOUND', 'TASK_NOT_FOUND'],
  task_not_cancelable: [200, -32002, 400, 'FAILED_PRECONDITION', 'FAILED_PRECONDITION', 'TASK_NOT_CANCELABLE'],
  task_ended: [200, -32004, 400, 'FAILED_PRECONDITION', 'FAILED_PRECONDITION', 'UNSUPPORTED_OPERATION'],
  turn_in_progress: [200, -32004, 400, 'FAILED_PRECONDITION', 'FAILED_PRECONDITION', 'UNSUPPORTED_OPERATION'],
  // A2A 1.1's TaskGenerationMismatchError (issue 36): the draft's codes, which the SDK (1.0) has none of.
  task_generation_mismatch: [200, -32010, 409, 'ABORTED', 'ABORTED', 'TASK_GENERATION_MISMATCH'],
  queue_full: [200, -32004, 400, 'FAILED_PRECONDITION', 'FAILED_PRECONDITION', 'UNSUPPORTED_OPERATION'],
  push_configs_full: [200, -32004, 400, 'FAILED_PRECONDITION', 'FAILED_PRECONDITION', 'UNSUPPORTED_OPERATION'],
  turn_fenced: [200, -32004, 400, 'FAILED_PRECONDITION', 'FAILED_PRECONDITION', 'UNSUPPORTED_OPERATION'],
  turns_at_limit: [503, -32603, 503, 'UNAVAILABLE', 'UNAVAILABLE', 'UNAVAILABLE'],
  instance_draining: [503, -32603, 503, 'UNAVAILABLE', 'UNAVAILABLE', 'UNAVAILABLE'],
  // Every retryable refusal is a 503 on JSON-RPC too, which a balancer sees.
  requests_at_limit: [503, -32603, 503, 'UNAVAILABLE', 'UNAVAILABLE', 'UNAVAILABLE'],
  event_loop_lagging: [503, -32603, 503, 'UNAVAILABLE', 'UNAVAILABLE', 'UNAVAILABLE'],
  model_unknown: [200, -32602, 400, 'INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'INVALID_PARAMS'],
  params_invalid: [200, -32602, 400, 'INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'INVALID_PARAMS'],
  request_invalid: [200, -32600, 400, 'INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'INVALID_PARAMS'],
  request_unparsable: [200, -32700, 400, 'INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'INVALID_PARAMS'],
  request_too_large: [413, -32600, 413, 'INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'INVALID_PARAMS'],
  unauthenticated: [401, -32600, 401, 'UNAUTHENTICATED', 'UNAUTHENTICATED'],
  // Issue 38: a JWT refused (invalid_token), a scope missing (insufficient_scope), the provider out of reach.
  token_invalid: [401, -32600, 401, 'UNAUTHENTICATED', 'UNAUTHENTICATED'],
  scope_insufficient: [403, -32600, 403, 'PERMISSION_DENIED', 'PERMISSION_DENIED'],
  identity_unavailable: [503, -32603, 503, 'UNAVAILABLE', 'UNAVAILABLE', 'UNAVAILABLE'],
  route_unknown: [404, -32601, 404, 'NOT_FOUND', 'UNIMPLEMENTED'],
  // Issue 39: a POST to a paused hook's trigger URL.
  hook_paused: [409, -32600, 409, 'FAILED_PRECONDITION', 'FAILED_PRECONDITION'],
  provider_failed: INTERNAL,
  store_failed: INTERNAL,
  data_unusable: INTERNAL,
  config_invalid: INTERNAL,
  config_unreadable: INTERNAL,
  tokens_invalid: INTERNAL,
};
const CODES = Object.keys(FORMS) as HarnessErrorCode[];

/**
 * A terminal whose every call fails with `error`, as a real one may: a rejected promise, a
 * stream that fails when read, or (`resubscribe`) at once, as one that validates before it
 * returns its stream.
 */
function failingTerminal(error: unknown): (call: Call) => Outcome {
  return (call) => {
    if (call.method === 'resubscribe') throw error;
    if (!call.streaming) return Promise.reject(error);
    // eslint-disable-next-line require-yield
    return (async function* () {
      throw error;
    })();
  };
}

/** Every call failing with `error`, behind the `errorMapping` step alone. */
function errorMapped(error: unknown, ...reports: Parameters<typeof errorMappingStep>): Pick<ComposedSteps, 'run'> {
  return compose([errorMappingStep(...reports)], failingTerminal(error));
}

const context = {} as never;
/** A unary call of `method` through `path`, on task `x`. */
const unary = (path: Pick<ComposedSteps, 'run'>, method: CallMethod) =>
  path.run({ method, params: { tenant: '', id: 'x' }, context, streaming: false } as Call) as Promise<unknown>;
/** A streaming call of `method` through `path`, on task `x`. */
const streamed = (path: Pick<ComposedSteps, 'run'>, method: StreamingMethod) =>
  path.run({ method, params: { tenant: '', id: 'x' }, context, streaming: true } as Call) as Stream;

describe("one function gives each transport's form of an error (transportForms)", () => {
  before(loadGrpcErrorForms);

  for (const [code, [jsonRpcHttp, jsonRpc, http, statusName, grpc, reason]] of Object.entries(FORMS)) {
    it(`${code}: JSON-RPC ${jsonRpc} (HTTP ${jsonRpcHttp}), HTTP+JSON ${http} ${statusName}, gRPC ${grpc}`, () => {
      const said = `the ${code} case, at /srv/secret with api_key=sk-abcdefghijkl`;
      const error = new HarnessError(code as HarnessErrorCode, said);
      const forms = transportForms(error);
      const internal = FORMS[code as HarnessErrorCode] === INTERNAL;
      const message = internal ? INTERNAL_ERROR_MESSAGE : said;
      assert.equal(forms.internal, internal ? error : undefined, 'an internal error is handed back for the log');

      assert.equal(forms.jsonRpc.httpStatus, jsonRpcHttp);
      assert.equal(forms.jsonRpc.error.code, jsonRpc);
      assert.equal(forms.jsonRpc.error.message, message);
      assert.deepEqual(
        forms.jsonRpc.error.data?.map((detail) => detail.reason),
        reason === undefined ? undefined : [reason],
      );

      assert.equal(forms.http.status, http);
      assert.equal(forms.http.body.error.code, http);
      assert.equal(forms.http.body.error.status, statusName);
      assert.equal(forms.http.body.error.message, message);
      assert.deepEqual(
        forms.http.body.error.details.map((detail) => detail.reason),
        reason === undefined ? [] : [reason],
      );

      assert.equal(status[forms.grpc.code], grpc);
      assert.equal(forms.grpc.details, message);
      // The details trailer the SDK's gRPC clients read: A2A's reason for A2A's own errors only.
      const statusDetails = forms.grpc.metadata?.get('grpc-status-details-bin')[0];
      if (reason === undefined || reason === 'INTERNAL_ERROR' || reason === 'UNAVAILABLE')
        assert.equal(statusDetails, undefined);
      else {
        const decoded = decodeStatus(statusDetails as Buffer);
        assert.equal(decoded.code, forms.grpc.code);
        assert.equal(decoded.message, message);
        assert.equal(decodeErrorInfo(decoded.details[0]!.value).reason, reason);
      }
    });
  }

  it("is the SDK's own mapping wherever a harness error is an A2A error and needs no code of its own", () => {
    const plain = CODES.filter((code) => {
      const [jsonRpcHttp, jsonRpc] = FORMS[code];
      // A refusal to retry has forms of its own on HTTP+JSON and gRPC (503, UNAVAILABLE: unavailable.ts),
      // an internal failure on gRPC (INTERNAL, where the SDK sends UNKNOWN).
      return (
        jsonRpcHttp === 200 &&
        FORMS[code] !== INTERNAL &&
        ![-32600, -32700].includes(jsonRpc) &&
        !['turns_at_limit', 'instance_draining', 'task_generation_mismatch'].includes(code)
      );
    });
    assert.ok(plain.length >= 8, plain.join());
    for (const code of plain) {
      const error = new HarnessError(code, `the ${code} case`);
      const forms = transportForms(error);
      // What a request handler throws for it, as the SDK's transports answer that.
      const thrown = toA2AError(error).error;
      assert.deepEqual(forms.jsonRpc.error, errors.toJsonRpcError(thrown), code);
      assert.equal(forms.http.status, errors.restStatusFor(thrown), code);
      assert.deepEqual(forms.http.body, errors.toRestErrorBody(thrown, forms.http.status), code);
      assert.equal(forms.grpc.code, grpcStatusFor(thrown), code);
      assert.deepEqual(forms.grpc.metadata?.toJSON(), buildGrpcErrorMetadata(Metadata, thrown)?.toJSON(), code);
    }
  });

  it("gives an A2A error the SDK's forms, a JSON-RPC envelope code included", () => {
    const version = transportForms(new VersionNotSupportedError('A2A-Version 9.9 is not supported.'));
    assert.equal(version.internal, undefined);
    assert.equal(version.jsonRpc.error.code, -32009);
    assert.equal(version.jsonRpc.error.message, 'A2A-Version 9.9 is not supported.');
    assert.equal(version.http.status, 400);
    assert.equal(version.http.body.error.status, 'FAILED_PRECONDITION');
    assert.equal(status[version.grpc.code], 'FAILED_PRECONDITION');

    const envelope = new JsonRpcRequestMalformedError({ message: 'not JSON', envelopeCode: -32700 });
    assert.equal(transportForms(envelope).jsonRpc.error.code, -32700);
    assert.equal(transportForms(envelope).http.status, 400);
  });

  it('never passes on the text of anything else: a fixed message, and the error handed back for the log', () => {
    for (const leaky of [
      new Error('ENOENT: /srv/secret/path/db.sqlite with api_key=sk-abcdefghijkl'),
      new TypeError("Cannot read properties of undefined (reading 'id')"),
      'a thrown string /srv/secret',
      undefined,
    ]) {
      const forms = transportForms(leaky);
      assert.equal(forms.internal, leaky);
      const wire = JSON.stringify([forms.jsonRpc, forms.http, forms.grpc.details]);
      assert.doesNotMatch(wire, /secret|undefined \(reading/);
      assert.equal(forms.jsonRpc.error.code, -32603);
      assert.equal(forms.http.status, 500);
    }
  });
});

describe('harness errors on the wire (one table, src/server/a2a-errors.ts)', () => {
  it('maps every harness error code: to an A2A error, or as internal when A2A has none for it', () => {
    for (const code of CODES) {
      const { error, internal } = toA2AError(new HarnessError(code, `the ${code} case`));
      assert.ok(error instanceof A2AError, code);
      // Refusals only an edge makes (401, 403, unknown route, a paused hook's URL) are a bug if thrown behind one.
      const edgeOnly = [
        'unauthenticated',
        'token_invalid',
        'scope_insufficient',
        'route_unknown',
        'hook_paused',
      ].includes(code);
      assert.equal(internal !== undefined, FORMS[code] === INTERNAL || edgeOnly, code);
    }
  });

  it('a generation mismatch (issue 36) carries the task, the generation expected and the current one in its details', () => {
    const forms = transportForms(generationMismatch('t-1', 3, 5));
    const metadata = { taskId: 't-1', expectedGeneration: '3', currentGeneration: '5' };
    assert.deepEqual(forms.http.body.error.details, [
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: 'TASK_GENERATION_MISMATCH',
        domain: 'a2a-protocol.org',
        metadata,
      },
    ]);
    assert.deepEqual(forms.jsonRpc.error.data, forms.http.body.error.details);
    assert.match(forms.http.body.error.message, /^Task generation mismatch: expected 3 but current generation is 5/);
    const decoded = decodeStatus(forms.grpc.metadata?.get('grpc-status-details-bin')[0] as Buffer);
    assert.deepEqual(decodeErrorInfo(decoded.details[0]!.value).metadata, metadata);
  });

  it('a busy task is UnsupportedOperation; an unknown model is a malformed request', () => {
    assert.ok(toA2AError(new HarnessError('turn_in_progress', 'busy')).error instanceof UnsupportedOperationError);
    assert.ok(toA2AError(new HarnessError('model_unknown', 'no such model')).error instanceof RequestMalformedError);
  });

  it('keeps the message of errors meant for the client, and A2A errors as they are', () => {
    assert.equal(
      toA2AError(new HarnessError('turn_in_progress', 'Wait for the reply.')).error.message,
      'Wait for the reply.',
    );
    const notFound = new TaskNotFoundError('Task not found: x');
    assert.equal(toA2AError(notFound).error, notFound);
  });

  it('never passes on the text of an internal failure: the client reads a fixed message, the log gets the error', async () => {
    const leaky = new Error('ENOENT: /srv/secret/path/db.sqlite with api_key=sk-abcdefghijkl');
    const reported: Array<[unknown, string]> = [];
    const path = errorMapped(leaky, (error, method) => reported.push([error, method]));
    await assert.rejects(unary(path, 'getTask'), (error: unknown) => {
      assert.ok(error instanceof A2AError && !(error instanceof TaskNotFoundError));
      assert.equal((error as Error).message, INTERNAL_ERROR_MESSAGE);
      return true;
    });
    await assert.rejects(streamed(path, 'sendMessageStream').next(), { message: INTERNAL_ERROR_MESSAGE });
    assert.throws(() => streamed(path, 'resubscribe'), { message: INTERNAL_ERROR_MESSAGE });
    assert.deepEqual(
      reported.map(([error, method]) => [error, method]),
      [
        [leaky, 'GetTask'],
        [leaky, 'SendStreamingMessage'],
        [leaky, 'SubscribeToTask'],
      ],
    );
  });

  it('a store failure is internal too, and is reported', async () => {
    const reported: unknown[] = [];
    const failure = new HarnessError('store_failed', 'database is locked at /var/lib/x.db');
    const path = errorMapped(failure, (error) => reported.push(error));
    await assert.rejects(unary(path, 'cancelTask'), {
      message: INTERNAL_ERROR_MESSAGE,
    });
    assert.deepEqual(reported, [failure]);
  });

  it('a retryable refusal (the turn bound, a drain) is told to onRefused with its reason, and is no internal failure', async () => {
    const refused: Array<[string, string]> = [];
    const internal: unknown[] = [];
    for (const code of ['turns_at_limit', 'instance_draining'] as const) {
      const path = errorMapped(
        new HarnessError(code, 'Send it again in a few seconds.'),
        (error) => internal.push(error),
        (reason, method) => refused.push([reason, method]),
      );
      await assert.rejects(streamed(path, 'sendMessageStream').next(), { reason: 'UNAVAILABLE' });
      await assert.rejects(unary(path, 'sendMessage'), { reason: 'UNAVAILABLE' });
    }
    const notFound = errorMapped(
      new HarnessError('task_not_found', 'No such task.'),
      (error) => internal.push(error),
      (reason, method) => refused.push([reason, method]),
    );
    await unary(notFound, 'getTask').catch(() => undefined);
    assert.deepEqual(refused, [
      ['turns_at_limit', 'SendStreamingMessage'],
      ['turns_at_limit', 'SendMessage'],
      ['instance_draining', 'SendStreamingMessage'],
      ['instance_draining', 'SendMessage'],
    ]);
    assert.deepEqual(internal, []);
  });
});

/**
 * The table of A2A 1.0.1, section 5.4 ("Error Code Mappings"), row by row: JSON-RPC code, gRPC
 * status, HTTP status. 1.0.1 changed the gRPC status of the three "not supported" errors from
 * 1.0.0's UNIMPLEMENTED to FAILED_PRECONDITION (and some HTTP statuses to 400/500); the official
 * TCK's GRPC-ERR-002 still grades against 1.0.0's table. Issue 22, item 3. The last row is not
 * in the table: the SDK's RequestMalformedError, JSON-RPC's invalid params.
 */
const SPEC_5_4: Array<[keyof typeof errors, number, keyof typeof status, number]> = [
  ['TaskNotFoundError', -32001, 'NOT_FOUND', 404],
  ['TaskNotCancelableError', -32002, 'FAILED_PRECONDITION', 400],
  ['PushNotificationNotSupportedError', -32003, 'FAILED_PRECONDITION', 400],
  ['UnsupportedOperationError', -32004, 'FAILED_PRECONDITION', 400],
  ['ContentTypeNotSupportedError', -32005, 'INVALID_ARGUMENT', 400],
  ['InvalidAgentResponseError', -32006, 'INTERNAL', 500],
  ['ExtendedAgentCardNotConfiguredError', -32007, 'FAILED_PRECONDITION', 400],
  ['ExtensionSupportRequiredError', -32008, 'FAILED_PRECONDITION', 400],
  ['VersionNotSupportedError', -32009, 'FAILED_PRECONDITION', 400],
  ['RequestMalformedError', -32602, 'INVALID_ARGUMENT', 400],
];

describe('A2A errors on each transport, as A2A 1.0.1 section 5.4 maps them', () => {
  for (const [name, jsonRpc, grpc, http] of SPEC_5_4) {
    it(`${name}: JSON-RPC ${jsonRpc}, gRPC ${grpc}, HTTP ${http}`, () => {
      const error = new (errors[name] as new (message: string) => A2AError)('x');
      assert.equal(errors.toJsonRpcError(error).code, jsonRpc);
      assert.equal(status[grpcStatusFor(error)], grpc);
      assert.equal(errors.restStatusFor(error), http);
    });
  }
});
