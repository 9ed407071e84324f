import type { Artifact, Message, Task } from '@a2a-js/sdk';
import {
  decodeArtifactHeader,
  decodeMessage,
  decodeMetadata,
  decodePart,
  decodeStatus,
  encodeMessage,
} from './codec.js';

/**
 * The in-memory image of one stored task: exactly what its rows say, plus what a save needs
 * to find out cheaply what changed (the stored messages by id, each artifact's stored header).
 *
 * The image owns its arrays and containers and the store mutates them in place as saves
 * commit (appending to `history` and to artifact `parts` costs nothing per stored item).
 * Nobody outside the store ever holds them: `copyTask` hands out fresh containers. Message and
 * part objects are shared with those copies, never mutated, and were decoded from stored text
 * by the store itself, so they share nothing with objects a caller passed to `save`.
 *
 * Every change goes through the helpers below, which keep `bytes`, the image's weight for the
 * cache's bound, up to date from the lengths of the texts they decode (see `WEIGHTS`).
 */
export interface StoredArtifact {
  /** The artifact as stored; the same object as in `task.artifacts`. */
  artifact: Artifact;
  /** Position among the task's artifacts, by first save. */
  seq: number;
  headerJson: string;
  /** The artifact's share of the image's `bytes`: header and parts. */
  bytes: number;
}

export interface StoredTask {
  tenant: string;
  owner: string;
  createdAt: string;
  /** The task row's `version` this image matches. */
  version: number;
  /** The task's generation: the number of its last logged event (`task-log.ts`). */
  generation: number;
  /** `history` has one message per `task_messages` row, in `seq` order. */
  task: Task;
  statusJson: string | null;
  metadataJson: string;
  /**
   * The messages of `history` by id; an id reused for other content (CMD-34, see `isStoredMessage`)
   * holds its messages in an array, so that the usual one message per id costs no array.
   */
  messagesById: Map<string, Message | Message[]>;
  artifacts: Map<string, StoredArtifact>;
  /** About how much memory the image holds, in bytes: an estimate, kept as it changes. */
  bytes: number;
}

/**
 * The estimate of an image's memory, from the stored JSON it was decoded from: one byte per
 * character of JSON (a decoded one-byte string takes about that; JSON adds quotes and keys
 * where the objects add headers), plus a fixed cost per object graph, measured on Node 20
 * with `--expose-gc` (a decoded message of a short text takes about 400 bytes besides its
 * text). Texts kept both as JSON and decoded (status, metadata, artifact headers) count
 * twice. Text outside Latin-1 takes two bytes a character in V8: up to twice the estimate.
 */
export const WEIGHTS = {
  task: 1024,
  message: 400,
  artifact: 400,
  part: 200,
} as const;

/** The task row fields an image is built from (see `task-rows.ts`). */
export interface StoredTaskHead {
  id: string;
  contextId: string;
  tenant: string;
  owner: string;
  createdAt: string;
  version: number;
  generation?: number;
  statusJson: string | null;
  metadataJson: string;
}

/** A new image from a task row; messages and artifacts are added with the helpers below. */
export function newStoredTask(head: StoredTaskHead): StoredTask {
  const bytes =
    WEIGHTS.task +
    head.id.length +
    head.contextId.length +
    2 * ((head.statusJson?.length ?? 0) + head.metadataJson.length);
  return {
    tenant: head.tenant,
    owner: head.owner,
    createdAt: head.createdAt,
    version: head.version,
    generation: head.generation ?? 0,
    task: {
      id: head.id,
      contextId: head.contextId,
      status: decodeStatus(head.statusJson),
      artifacts: [],
      history: [],
      metadata: decodeMetadata(head.metadataJson),
    },
    statusJson: head.statusJson,
    metadataJson: head.metadataJson,
    messagesById: new Map(),
    artifacts: new Map(),
    bytes,
  };
}

/** Replaces the status (null: none) with the one this JSON encodes. */
export function setStoredStatus(stored: StoredTask, statusJson: string | null): void {
  stored.task.status = decodeStatus(statusJson);
  stored.bytes += 2 * ((statusJson?.length ?? 0) - (stored.statusJson?.length ?? 0));
  stored.statusJson = statusJson;
}

/** Replaces the metadata with the object this JSON encodes. */
export function setStoredMetadata(stored: StoredTask, metadataJson: string): void {
  stored.task.metadata = decodeMetadata(metadataJson);
  stored.bytes += 2 * (metadataJson.length - stored.metadataJson.length);
  stored.metadataJson = metadataJson;
}

export function addStoredMessage(stored: StoredTask, messageJson: string): void {
  const message = decodeMessage(messageJson);
  stored.task.history.push(message);
  const same = stored.messagesById.get(message.messageId);
  if (same === undefined) stored.messagesById.set(message.messageId, message);
  else if (Array.isArray(same)) same.push(message);
  else stored.messagesById.set(message.messageId, [same, message]);
  stored.bytes += WEIGHTS.message + messageJson.length;
}

/** Drops the messages from position `from` on (a save writes them again, after one put before them). */
export function dropStoredMessages(stored: StoredTask, from: number): void {
  for (const message of stored.task.history.splice(from)) {
    const same = stored.messagesById.get(message.messageId);
    const others = Array.isArray(same) ? same.filter((m) => m !== message) : [];
    if (others.length === 0) stored.messagesById.delete(message.messageId);
    else stored.messagesById.set(message.messageId, others.length === 1 ? others[0]! : others);
    stored.bytes -= WEIGHTS.message + encodeMessage(message).length;
  }
}

/**
 * Whether the task's history holds this message already: one with its id and its content. A2A
 * lets clients reuse ids, so the same id with other content is another message, stored in its
 * place (CMD-34). Only messages whose id is stored are compared, by their encoding.
 */
export function isStoredMessage(stored: StoredTask, message: Message): boolean {
  const same = stored.messagesById.get(message.messageId);
  if (same === undefined) return false;
  if (!Array.isArray(same)) return same === message || sameContent(same, message);
  return same.some((other) => other === message || sameContent(other, message));
}

/**
 * Whether two messages with one id are the same message. The task and context ids are left out:
 * in a task's history they name that task, and a turn's copy of the user's message has them
 * filled in where the stored one, as the client sent it, may not.
 */
export function sameContent(a: Message, b: Message): boolean {
  return contentOf(a) === contentOf(b);
}

function contentOf(message: Message): string {
  return encodeMessage({ ...message, taskId: '', contextId: '' });
}

function partsBytes(partJson: readonly string[]): number {
  let bytes = 0;
  for (const json of partJson) bytes += WEIGHTS.part + json.length;
  return bytes;
}

/** Adds an artifact after the others, or replaces the one with the same id in place. */
export function putStoredArtifact(
  stored: StoredTask,
  artifactId: string,
  headerJson: string,
  partJson: readonly string[],
): void {
  const artifact = decodeArtifactHeader(headerJson);
  artifact.parts = partJson.map(decodePart);
  const bytes = WEIGHTS.artifact + 2 * headerJson.length + partsBytes(partJson);
  const previous = stored.artifacts.get(artifactId);
  if (previous) {
    const index = stored.task.artifacts.indexOf(previous.artifact);
    stored.task.artifacts[index] = artifact;
    stored.artifacts.set(artifactId, { artifact, seq: previous.seq, headerJson, bytes });
    stored.bytes += bytes - previous.bytes;
  } else {
    stored.task.artifacts.push(artifact);
    stored.artifacts.set(artifactId, { artifact, seq: stored.artifacts.size, headerJson, bytes });
    stored.bytes += bytes;
  }
}

/** Changes a stored artifact's header (name, description, metadata, extensions), keeping its parts. */
export function setStoredArtifactHeader(stored: StoredTask, artifactId: string, headerJson: string): void {
  const previous = stored.artifacts.get(artifactId);
  if (!previous) return;
  const artifact = decodeArtifactHeader(headerJson);
  artifact.parts = previous.artifact.parts;
  const index = stored.task.artifacts.indexOf(previous.artifact);
  stored.task.artifacts[index] = artifact;
  const change = 2 * (headerJson.length - previous.headerJson.length);
  stored.artifacts.set(artifactId, { artifact, seq: previous.seq, headerJson, bytes: previous.bytes + change });
  stored.bytes += change;
}

export function appendStoredParts(stored: StoredTask, artifactId: string, partJson: readonly string[]): void {
  const previous = stored.artifacts.get(artifactId);
  if (!previous) return;
  for (const json of partJson) previous.artifact.parts.push(decodePart(json));
  const added = partsBytes(partJson);
  previous.bytes += added;
  stored.bytes += added;
}

/**
 * A copy the caller may change freely: new task, status, history and artifacts containers,
 * new artifact objects with new `parts` arrays, new metadata objects. Cost is one array copy
 * per container, no parsing and no deep clone.
 */
export function copyTask(task: Task): Task {
  return {
    id: task.id,
    contextId: task.contextId,
    status: task.status ? { ...task.status } : undefined,
    artifacts: task.artifacts.map((artifact) => ({
      ...artifact,
      parts: artifact.parts.slice(),
      metadata: artifact.metadata ? { ...artifact.metadata } : artifact.metadata,
      extensions: artifact.extensions.slice(),
    })),
    history: task.history.slice(),
    metadata: { ...task.metadata },
  };
}
