import { randomUUID } from 'node:crypto';
import { status, type ServiceDefinition, type UntypedServiceImplementation } from '@grpc/grpc-js';
import type { User } from '@a2a-js/sdk/server';
import { UserBuilder } from '@a2a-js/sdk/server/grpc';
import { HarnessError } from '../errors.js';
import type { Logger } from '../log.js';
import { UNAUTHENTICATED_MESSAGE, type TokenAuthenticator } from './auth.js';
import { transportForms, type GrpcForm } from './a2a-errors.js';
import { grpcRefusal } from './grpc-edge.js';
import type { Admission } from './admission.js';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export interface GrpcCallOptions {
  log: Logger;
  /** When set, every call needs `authorization: Bearer <token>` metadata it knows. */
  authenticator?: TokenAuthenticator;
  /** Admits or refuses every call before anything else (`admission.ts`), as the HTTP routes are. */
  admission?: Admission;
}

type AnyCall = {
  request?: unknown;
  metadata: { get(key: string): Array<string | Buffer> };
  on(event: string, listener: (...args: never[]) => void): unknown;
  emit(event: string, ...args: unknown[]): boolean;
};
type Callback = (error: GrpcForm | null, value?: unknown) => void;

const users = new WeakMap<object, User>();

/** What the SDK's gRPC service is given: the user {@link guardCalls} found, or none. */
export function grpcUserBuilder(authenticator: TokenAuthenticator | undefined): UserBuilder {
  if (!authenticator) return UserBuilder.noAuthentication;
  return async (call) => {
    const user = users.get(call);
    if (!user) throw new Error('gRPC call reached the A2A handler without authentication');
    return user;
  };
}

/**
 * Wraps each method of a gRPC service implementation: a call past the admission's bounds ends
 * with status UNAVAILABLE at once, before it is logged or authenticated; an admitted one holds
 * its place until it ends or is cancelled. With an authenticator, a call without a
 * valid bearer token ends with status UNAUTHENTICATED before the SDK sees it (an error thrown
 * from the SDK's user builder would end as UNKNOWN); a request the edge schema refuses ends
 * with INVALID_ARGUMENT before the SDK sees it (`grpc-edge.ts`); every call is logged once when it ends,
 * with its method, status code, duration, request id (`x-request-id` metadata or a UUID) and
 * user. Never metadata values or message content.
 */
export function guardCalls(
  definition: ServiceDefinition,
  implementation: UntypedServiceImplementation,
  options: GrpcCallOptions,
): UntypedServiceImplementation {
  const guarded: UntypedServiceImplementation = {};
  for (const [name, handler] of Object.entries(implementation)) {
    const streaming = definition[name]?.responseStream ?? false;
    guarded[name] = ((call: AnyCall, callback?: Callback) => {
      // Every call is new load: HTTP/2 carries any number of them on one connection.
      const admitted = options.admission?.admit(true);
      if (admitted && 'refused' in admitted) {
        const refusal = transportForms(admitted.refused).grpc;
        if (streaming) call.emit('error', refusal);
        else callback!(refusal, null);
        return;
      }
      const release = admitted?.release;
      if (release) call.on('cancelled', release);
      const offered = call.metadata.get('x-request-id')[0];
      const requestId = typeof offered === 'string' && SANE_REQUEST_ID.test(offered) ? offered : randomUUID();
      const started = process.hrtime.bigint();
      const user = options.authenticator?.authenticate(call.metadata.get('authorization').map(String));
      let logged = false;
      const done = (code: number) => {
        release?.();
        if (logged) return;
        logged = true;
        const ms = Number((process.hrtime.bigint() - started) / 1000n) / 1000;
        options.log.info('grpc call', {
          requestId,
          method: name,
          code: status[code] ?? code,
          ms,
          user: user?.userName,
        });
      };
      const refusal: GrpcForm | undefined =
        options.authenticator && !user
          ? transportForms(new HarnessError('unauthenticated', UNAUTHENTICATED_MESSAGE)).grpc
          : grpcRefusal(name, call.request);
      if (refusal) {
        done(refusal.code);
        if (streaming) call.emit('error', refusal);
        else callback!(refusal, null);
        return;
      }
      if (user) users.set(call, user);
      if (streaming) {
        let code: number = status.OK;
        call.on(
          'error',
          (error: { code?: number }) => (code = typeof error?.code === 'number' ? error.code : status.UNKNOWN),
        );
        call.on('finish', () => done(code));
        call.on('close', () => done(code));
        return (handler as (call: AnyCall) => unknown)(call);
      }
      return (handler as (call: AnyCall, callback: Callback) => unknown)(call, (error, value) => {
        done(error ? error.code : status.OK);
        callback!(error, value);
      });
    }) as UntypedServiceImplementation[string];
  }
  return guarded;
}
