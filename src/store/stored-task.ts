import type { Artifact, Task } from '@a2a-js/sdk';
import { decodeArtifactHeader, decodeMessage, decodeMetadata, decodePart, decodeStatus } from './codec.js';

/**
 * The in-memory image of one stored task: exactly what its rows say, plus what a save needs
 * to find out cheaply what changed (the stored message ids, each artifact's stored header).
 *
 * The image owns its arrays and containers and the store mutates them in place as saves
 * commit (appending to `history` and to artifact `parts` costs nothing per stored item).
 * Nobody outside the store ever holds them: `copyTask` hands out fresh containers. Message and
 * part objects are shared with those copies, never mutated, and were decoded from stored text
 * by the store itself, so they share nothing with objects a caller passed to `save`.
 */
export interface StoredArtifact {
  /** The artifact as stored; the same object as in `task.artifacts`. */
  artifact: Artifact;
  /** Position among the task's artifacts, by first save. */
  seq: number;
  headerJson: string;
}

export interface StoredTask {
  tenant: string;
  owner: string;
  createdAt: string;
  /** `history` has one message per `task_messages` row, in `seq` order. */
  task: Task;
  statusJson: string | null;
  metadataJson: string;
  messageIds: Set<string>;
  artifacts: Map<string, StoredArtifact>;
}

/** The task row fields an image is built from (see `task-rows.ts`). */
export interface StoredTaskHead {
  id: string;
  contextId: string;
  tenant: string;
  owner: string;
  createdAt: string;
  statusJson: string | null;
  metadataJson: string;
}

/** A new image from a task row; messages and artifacts are added with the helpers below. */
export function newStoredTask(head: StoredTaskHead): StoredTask {
  return {
    tenant: head.tenant,
    owner: head.owner,
    createdAt: head.createdAt,
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
    messageIds: new Set(),
    artifacts: new Map(),
  };
}

export function addStoredMessage(stored: StoredTask, messageJson: string): void {
  const message = decodeMessage(messageJson);
  stored.task.history.push(message);
  stored.messageIds.add(message.messageId);
}

/** Adds an artifact after the others, or replaces the one with the same id in place. */
export function putStoredArtifact(stored: StoredTask, artifactId: string, headerJson: string, partJson: readonly string[]): void {
  const artifact = decodeArtifactHeader(headerJson);
  artifact.parts = partJson.map(decodePart);
  const previous = stored.artifacts.get(artifactId);
  if (previous) {
    const index = stored.task.artifacts.indexOf(previous.artifact);
    stored.task.artifacts[index] = artifact;
    stored.artifacts.set(artifactId, { artifact, seq: previous.seq, headerJson });
  } else {
    stored.task.artifacts.push(artifact);
    stored.artifacts.set(artifactId, { artifact, seq: stored.artifacts.size, headerJson });
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
  stored.artifacts.set(artifactId, { artifact, seq: previous.seq, headerJson });
}

export function appendStoredParts(stored: StoredTask, artifactId: string, partJson: readonly string[]): void {
  const previous = stored.artifacts.get(artifactId);
  if (previous) for (const json of partJson) previous.artifact.parts.push(decodePart(json));
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
