import { A2A_PROTOCOL_VERSION, A2A_VERSION_HEADER } from '@a2a-js/sdk';
import { VersionNotSupportedError } from '@a2a-js/sdk/errors';
import { GENERATIONS_VERSION } from '../wire.js';

/**
 * The A2A versions this server speaks, oldest first: 1.0 (`A2A_PROTOCOL_VERSION`, the SDK's), and
 * 1.1, which is 1.0 with the task's generation as a field (issue 36; spec/stream-resume-extension-v1.md).
 * The card lists an interface of each binding for each (`card.ts`).
 */
export const SPOKEN_VERSIONS: readonly string[] = [A2A_PROTOCOL_VERSION, GENERATIONS_VERSION];

/** Whether a call asking for `requested` (its `A2A-Version`) is served. */
export function isSpokenVersion(requested: string | undefined): requested is string {
  return requested !== undefined && SPOKEN_VERSIONS.includes(requested);
}

/**
 * Throws the refusal of a call asking for `requested` (its `A2A-Version` header; undefined: none)
 * unless this server speaks it, where the HTTP bindings build the call's context
 * (`call-context.ts`; the gRPC binding tells it with {@link versionRefusal}). A call without the
 * header asks for 0.3, and "version '0.3' is not supported" says neither that the header was
 * missing nor what to send; this refusal, a `VersionNotSupportedError` (JSON-RPC -32009, HTTP 400
 * and gRPC FAILED_PRECONDITION), says both.
 */
export function checkProtocolVersion(requested: string | undefined): void {
  if (!isSpokenVersion(requested)) throw new VersionNotSupportedError(versionRefusal(requested));
}

/** What a call asking for `requested` (undefined: it sent no header) is told. */
export function versionRefusal(requested: string | undefined): string {
  const send = SPOKEN_VERSIONS.map((version) => `\`${A2A_VERSION_HEADER}: ${version}\``).join(' or ');
  const asked = requested?.trim()
    ? `The requested A2A protocol version '${requested}' is not supported`
    : `A request without the ${A2A_VERSION_HEADER} header asks for A2A 0.3, which is not supported`;
  return `${asked}: this server speaks A2A ${SPOKEN_VERSIONS.join(' and ')}; send the header ${send}.`;
}
