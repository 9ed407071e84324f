import { Artifact, Message, Part, TaskStatus } from '@a2a-js/sdk';

/**
 * How task pieces become column text and back. Everything goes through the SDK's own protobuf
 * JSON codecs, never plain `JSON.stringify`: `TaskState` and `Role` are numeric enums in
 * TypeScript (stored as names, read back as numbers) and raw file bytes are `Buffer`s (stored
 * as base64). Decoding always parses the stored text, so a decoded object shares nothing with
 * the object that was encoded (`Part.toJSON` passes a data part's value through by reference).
 *
 * Known limits of the SDK codecs: a data part whose value is `null` reads back with no content,
 * and defaults are filled in on read (`contextId: ''`, `extensions: []`, ...).
 */

export function encodeMessage(message: Message): string {
  return JSON.stringify(Message.toJSON(message));
}

export function decodeMessage(json: string): Message {
  return Message.fromJSON(JSON.parse(json));
}

export function encodePart(part: Part): string {
  return JSON.stringify(Part.toJSON(part));
}

export function decodePart(json: string): Part {
  return Part.fromJSON(JSON.parse(json));
}

/** The status with its message, or null for a task without one. */
export function encodeStatus(status: TaskStatus | undefined): string | null {
  return status ? JSON.stringify(TaskStatus.toJSON(status)) : null;
}

export function decodeStatus(json: string | null): TaskStatus | undefined {
  return json === null ? undefined : TaskStatus.fromJSON(JSON.parse(json));
}

/** An artifact without its parts, which are stored as rows of their own. */
export function encodeArtifactHeader(artifact: Artifact): string {
  return JSON.stringify(Artifact.toJSON({ ...artifact, parts: [] }));
}

/** The artifact described by a header, with `parts: []` for the caller to fill. */
export function decodeArtifactHeader(json: string): Artifact {
  return { ...Artifact.fromJSON(JSON.parse(json)), parts: [] };
}

/** Task metadata is a plain JSON object (a protobuf Struct); none is stored as `{}`. */
export function encodeMetadata(metadata: Record<string, unknown> | undefined): string {
  return JSON.stringify(metadata ?? {});
}

export function decodeMetadata(json: string): Record<string, unknown> {
  const value: unknown = JSON.parse(json);
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** Milliseconds since the epoch for a status timestamp, or null when missing or unparseable. */
export function timestampMillis(timestamp: string | undefined): number | null {
  if (!timestamp) return null;
  const millis = Date.parse(timestamp);
  return Number.isNaN(millis) ? null : millis;
}
