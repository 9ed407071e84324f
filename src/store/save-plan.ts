import type { Artifact, Message, Part, Task, TaskStatus } from '@a2a-js/sdk';
import { encodeArtifactHeader, encodeMessage, encodeMetadata, encodePart, encodeStatus } from './codec.js';
import { isStoredMessage, sameContent, type StoredTask } from './stored-task.js';

/**
 * Works out what one write must store, by comparing the task its events produce with the stored
 * image. This is what keeps an event's cost flat as a task grows: only the few things the
 * events changed are written.
 *
 * - History: messages not stored (by id and content, CMD-34) are appended, in their order;
 *   stored ones missing from the incoming history stay. A message put before stored ones (a
 *   turn's final message, `TurnWrite.replyAfter`) rewrites the history from its place on.
 * - Status is replaced by every write that carries one: writes of a task go one at a time, under
 *   its lock, in the log's order, so the last write is the latest event.
 * - Metadata is replaced as a whole.
 * - Artifacts: a new one is inserted; one whose stored parts are a prefix of the incoming
 *   parts gets only the new parts; any other is replaced. Artifacts are never removed.
 */

export interface MessageWrite {
  seq: number;
  messageId: string;
  json: string;
}

export interface ArtifactWrite {
  artifactId: string;
  /** insert: new artifact; replace: header and all parts rewritten; update: see below. */
  kind: 'insert' | 'replace' | 'update';
  seq: number;
  headerJson: string;
  /** For `update`: whether the header must be rewritten. */
  headerChanged: boolean;
  /** Sequence number of the first part in `partJson` (the stored count for `update`). */
  firstPartSeq: number;
  partJson: string[];
}

export interface SavePlan {
  /** No stored image: the task row must be inserted. */
  isNew: boolean;
  statusChanged: boolean;
  /** The status to store (the stored one when the save carries none), and its encoding. */
  status: TaskStatus | undefined;
  statusJson: string | null;
  metadataChanged: boolean;
  metadataJson: string;
  messages: MessageWrite[];
  /**
   * Where `messages` start when they rewrite the end of the history (a message put before stored
   * ones): the stored rows from this position on are replaced. Undefined when they are appended.
   */
  messagesFrom: number | undefined;
  artifacts: ArtifactWrite[];
  /** The task's generation after the write, when it logs events (`task-log.ts`). */
  generation: number | undefined;
}

/** Whether the plan writes nothing at all, so the save can skip its transaction. */
export function isEmptyPlan(plan: SavePlan): boolean {
  return (
    !plan.isNew &&
    !plan.statusChanged &&
    !plan.metadataChanged &&
    plan.messages.length === 0 &&
    plan.artifacts.length === 0 &&
    plan.generation === undefined
  );
}

export function planSave(stored: StoredTask | undefined, incoming: Task, generation?: number): SavePlan {
  const storedStatus = stored?.task.status;
  const replaceStatus = incoming.status !== undefined;
  const statusJson = replaceStatus ? encodeStatus(incoming.status) : (stored?.statusJson ?? null);
  const metadataJson = encodeMetadata(incoming.metadata);
  const { from, writes } = planMessages(stored, incoming);
  return {
    isNew: stored === undefined,
    statusChanged: stored !== undefined && statusJson !== stored.statusJson,
    status: replaceStatus ? incoming.status : storedStatus,
    statusJson,
    metadataChanged: stored !== undefined && metadataJson !== stored.metadataJson,
    metadataJson,
    messages: writes,
    messagesFrom: from,
    artifacts: planArtifacts(stored, incoming.artifacts ?? []),
    generation,
  };
}

/**
 * New messages of the incoming history. A message at the same position as the very same
 * stored object is known without a lookup: the SDK keeps the loaded history and appends to
 * it, so on a long task this skips thousands of map lookups per event. Any other is looked up
 * by id, and its content compared only when its id is stored (a turn's first save, once).
 */
function planMessages(
  stored: StoredTask | undefined,
  incoming: Task,
): { from: number | undefined; writes: MessageWrite[] } {
  const writes: MessageWrite[] = [];
  const storedHistory = stored?.task.history ?? [];
  const history = incoming.history ?? [];
  const from = insertedAt(storedHistory, history);
  if (from !== undefined) return rewriteFrom(stored!, history, from);
  let seq = storedHistory.length;
  let planned: Map<string, Message[]> | undefined;
  for (let i = 0; i < history.length; i++) {
    const message = history[i]!;
    if (message === storedHistory[i]) continue;
    if (stored && isStoredMessage(stored, message)) continue;
    const id = message.messageId;
    const same = planned?.get(id);
    if (same?.some((other) => sameContent(other, message))) continue;
    if (same) same.push(message);
    else (planned ??= new Map()).set(id, [message]);
    writes.push({ seq: seq++, messageId: id, json: encodeMessage(message) });
  }
  return { from: undefined, writes };
}

/**
 * Where new messages were put before stored ones: the incoming history is the stored one with
 * messages inserted at one place, the stored ones after it being the very same objects (what
 * `applyEvent` does with `after`). Undefined when messages were only appended, which is known
 * at once: the incoming history then ends with a message that is not the stored last one.
 */
function insertedAt(stored: readonly Message[], incoming: readonly Message[]): number | undefined {
  const added = incoming.length - stored.length;
  if (added <= 0 || stored.length === 0 || incoming.at(-1) !== stored.at(-1)) return undefined;
  let at = 0;
  while (incoming[at] === stored[at]) at++;
  for (let i = at; i < stored.length; i++) if (incoming[i + added] !== stored[i]) return undefined;
  return at;
}

/** The history rewritten from `from` on: the inserted messages not stored already, then the stored ones after them. */
function rewriteFrom(
  stored: StoredTask,
  history: readonly Message[],
  from: number,
): { from: number | undefined; writes: MessageWrite[] } {
  const storedAfter = stored.task.history.slice(from);
  const inserted = history
    .slice(from, history.length - storedAfter.length)
    .filter((message) => !isStoredMessage(stored, message));
  if (inserted.length === 0) return { from: undefined, writes: [] };
  const writes = [...inserted, ...storedAfter].map((message, i) => ({
    seq: from + i,
    messageId: message.messageId,
    json: encodeMessage(message),
  }));
  return { from, writes };
}

function planArtifacts(stored: StoredTask | undefined, incoming: readonly Artifact[]): ArtifactWrite[] {
  const writes: ArtifactWrite[] = [];
  const seen = new Set<string>();
  let nextSeq = stored?.artifacts.size ?? 0;
  for (const artifact of incoming) {
    const artifactId = artifact.artifactId;
    if (seen.has(artifactId)) continue;
    seen.add(artifactId);
    const parts = artifact.parts ?? [];
    const previous = stored?.artifacts.get(artifactId);
    if (!previous) {
      const headerJson = encodeArtifactHeader(artifact);
      writes.push({
        artifactId,
        kind: 'insert',
        seq: nextSeq++,
        headerJson,
        headerChanged: true,
        firstPartSeq: 0,
        partJson: parts.map(encodePart),
      });
      continue;
    }
    const storedParts = previous.artifact.parts;
    const headerJson = sameHeader(artifact, previous.artifact) ? previous.headerJson : encodeArtifactHeader(artifact);
    const headerChanged = headerJson !== previous.headerJson;
    if (isPrefix(storedParts, parts)) {
      if (!headerChanged && parts.length === storedParts.length) continue;
      const partJson = parts.slice(storedParts.length).map(encodePart);
      writes.push({
        artifactId,
        kind: 'update',
        seq: previous.seq,
        headerJson,
        headerChanged,
        firstPartSeq: storedParts.length,
        partJson,
      });
    } else {
      writes.push({
        artifactId,
        kind: 'replace',
        seq: previous.seq,
        headerJson,
        headerChanged: true,
        firstPartSeq: 0,
        partJson: parts.map(encodePart),
      });
    }
  }
  return writes;
}

/**
 * Whether an artifact's header is certainly the stored one, without encoding it: same
 * strings, same extensions, metadata with the same keys holding the same values. A copy from
 * `load` that nobody changed passes, so a task with many artifacts from earlier turns does not
 * encode every header on every event. Anything else is compared by its encoded JSON.
 */
function sameHeader(artifact: Artifact, stored: Artifact): boolean {
  if (artifact.name !== stored.name || artifact.description !== stored.description) return false;
  const extensions = artifact.extensions ?? [];
  if (extensions.length !== stored.extensions.length || extensions.some((uri, i) => uri !== stored.extensions[i]))
    return false;
  const a = artifact.metadata;
  const b = stored.metadata;
  if (a === undefined || b === undefined) return a === b;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && a[key] === b[key]);
}

/**
 * Whether `stored` is a prefix of `incoming`. The SDK appends to the parts array of the object
 * `load` returned, so stored parts are usually the very same objects; others (a task event
 * clones everything) are compared by their encoded JSON.
 */
function isPrefix(stored: readonly Part[], incoming: readonly Part[]): boolean {
  if (incoming.length < stored.length) return false;
  for (let i = 0; i < stored.length; i++) {
    const a = stored[i]!;
    const b = incoming[i]!;
    if (a !== b && encodePart(a) !== encodePart(b)) return false;
  }
  return true;
}
