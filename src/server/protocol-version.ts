import { A2A_PROTOCOL_VERSION, A2A_VERSION_HEADER } from '@a2a-js/sdk';
import { VersionNotSupportedError } from '@a2a-js/sdk/errors';
import type { ServerCallContextBuilder } from '@a2a-js/sdk/server';

/**
 * The protocol version a call asks for (its `A2A-Version` header, or gRPC metadata), checked
 * where each transport builds the call's context (the HTTP bindings' `call-context.ts`, the
 * SDK's gRPC transport, just before its own check). The SDK refuses a call without the header as "version '0.3' is not supported",
 * which says neither that the header was missing nor what to send; this refusal, the same
 * `VersionNotSupportedError` (JSON-RPC -32009, HTTP 400 and gRPC FAILED_PRECONDITION), says both.
 */
export function requireProtocolVersion(inner: ServerCallContextBuilder): ServerCallContextBuilder {
  return (options) => {
    checkProtocolVersion(options.requestedVersion);
    return inner(options);
  };
}

/** Throws the refusal of a call asking for `requested` (undefined: no header) unless this server speaks it. */
export function checkProtocolVersion(requested: string | undefined): void {
  if (requested !== A2A_PROTOCOL_VERSION) throw new VersionNotSupportedError(versionRefusal(requested));
}

/** What a call asking for `requested` (undefined: it sent no header) is told. */
export function versionRefusal(requested: string | undefined): string {
  const send = `send the header \`${A2A_VERSION_HEADER}: ${A2A_PROTOCOL_VERSION}\``;
  const asked = requested?.trim()
    ? `The requested A2A protocol version '${requested}' is not supported`
    : `A request without the ${A2A_VERSION_HEADER} header asks for A2A 0.3, which is not supported`;
  return `${asked}: this server speaks A2A ${A2A_PROTOCOL_VERSION}; ${send}.`;
}
