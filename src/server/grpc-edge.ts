import type { ServiceDefinition } from '@grpc/grpc-js';
import { HarnessError } from '../errors.js';
import { transportForms, type GrpcForm } from './a2a-errors.js';
import { EDGE_LIMITS, isEdgeMethod, refusal } from './edge-schema.js';
import { protoNestsDeeperThan } from './proto-nesting.js';

/**
 * Protobuf levels a request may nest before it is decoded. Each JSON level of a Struct takes
 * three (Struct, entry, Value) and each list level two, so every request within the schema's
 * JSON depth fits, with room for the envelope; the schema then applies the exact JSON bound,
 * as on the other transports. Far below where the decoder's recursion overflows (thousands).
 */
export const MAX_PROTO_NESTING = 3 * EDGE_LIMITS.depth + 16;

const TOO_DEEP = `The request nests more than ${EDGE_LIMITS.depth} levels deep (in its metadata or data); flatten it.`;

/** What a request that must not or cannot be decoded becomes; {@link grpcRefusal} refuses it with `error`. */
class UndecodedRequest {
  constructor(readonly error: HarnessError) {}
}

/** A request as decoded, with its bytes: A2A 1.1's fields, which the SDK's decoders drop, are read from them. */
export class DecodedRequest {
  constructor(
    readonly value: unknown,
    readonly bytes: Uint8Array,
  ) {}
}

/** The decoded request of a call, if it decoded. */
export function requestOf(request: unknown): unknown {
  return request instanceof DecodedRequest ? request.value : undefined;
}

/**
 * The service definition with each request checked before and while it is decoded. A decoder
 * that throws ends the call as INTERNAL "Error deserializing request" (grpc-js ignores the
 * error's code), so a request nested past {@link MAX_PROTO_NESTING} is not decoded at all and
 * one that does not decode (garbage, truncated bytes) is caught: each becomes an
 * {@link UndecodedRequest}, which the call refuses as INVALID_ARGUMENT, as a malformed request
 * is on the other transports.
 */
export function boundedDefinition(definition: ServiceDefinition): ServiceDefinition {
  const bounded = Object.entries(definition).map(([name, method]) => {
    const decode = method.requestDeserialize;
    const rpc = method.path.slice(method.path.lastIndexOf('/') + 1);
    const requestDeserialize = (bytes: Buffer) => {
      if (protoNestsDeeperThan(bytes, MAX_PROTO_NESTING))
        return new UndecodedRequest(new HarnessError('request_invalid', TOO_DEEP));
      try {
        return new DecodedRequest(decode(bytes), bytes);
      } catch {
        const reason = `The ${rpc} request is not valid protobuf (malformed or truncated bytes).`;
        return new UndecodedRequest(new HarnessError('request_unparsable', reason));
      }
    };
    return [name, { ...method, requestDeserialize }];
  });
  return Object.fromEntries(bounded) as ServiceDefinition;
}

// Each request type has its own converter; the binding's table holds them under one signature.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the request types differ per method
export type ToJson = (request: any) => unknown;

/**
 * Why the decoded request of the A2A method `method` (`SendMessage`) is refused, as the status
 * to end the call with, or undefined when it is accepted. The request is turned back into its
 * JSON form with `toJSON` and checked against the same schema as on JSON-RPC and HTTP+JSON; a
 * refusal is invalid params (INVALID_ARGUMENT, with the error details the SDK's clients read).
 */
export function grpcRefusal(method: string, request: unknown, toJSON: ToJson | undefined): GrpcForm | undefined {
  if (request instanceof UndecodedRequest) return transportForms(request.error).grpc;
  const value = requestOf(request);
  const reason = toJSON && isEdgeMethod(method) ? refusal(method, toJSON(value), 'the request') : undefined;
  return reason ? transportForms(new HarnessError('params_invalid', reason)).grpc : undefined;
}
