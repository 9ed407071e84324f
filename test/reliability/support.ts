/**
 * What the reliability tests and the soak share: the text of streamed and
 * stored artifacts, the checks that a message leaks nothing, and a read-only integrity check
 * of the SQLite file.
 */
import assert from 'node:assert/strict';
import BetterSqlite3 from 'better-sqlite3';
import type { Artifact, Message, StreamResponse, Task } from '@a2a-js/sdk';

/** The text of a chat request's last user message, as the fixture model server received it. */
export function lastUserText(body: any): string {
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  const last = messages.filter((m) => m.role === 'user').at(-1);
  if (!last) return '';
  return typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
}

export function partsText(parts: readonly { content?: { $case: string; value?: unknown } }[] | undefined): string {
  return (parts ?? []).map((p) => (p.content?.$case === 'text' ? String(p.content.value) : '')).join('');
}

export function messageText(message: Message | undefined): string {
  return partsText(message?.parts);
}

export function artifactText(artifact: Artifact | undefined): string {
  return partsText(artifact?.parts);
}

/** One streamed turn as its client saw it: artifact chunks in arrival order, and how it ended. */
export interface StreamRecord {
  taskId: string;
  artifactId?: string;
  /** The concatenated text of every artifact chunk received. */
  text: string;
  chunks: number;
  /** `append` flags, first chunk `false`, the rest `true`. */
  appendFlags: boolean[];
  lastChunks: number;
  /** Final (non-command) status updates: state and message text. */
  finals: { state: number; text: string; messageId: string }[];
  /** Command reply message ids seen on this stream. */
  commandReplies: string[];
  events: number;
}

export function newStreamRecord(taskId: string): StreamRecord {
  return { taskId, text: '', chunks: 0, appendFlags: [], lastChunks: 0, finals: [], commandReplies: [], events: 0 };
}

/** Folds one stream event into the record; returns a problem when the event is out of place. */
export function recordEvent(record: StreamRecord, event: StreamResponse): string | undefined {
  record.events += 1;
  const payload = event.payload;
  if (payload?.$case === 'artifactUpdate') {
    const update = payload.value;
    if (record.finals.length > 0) return `artifact chunk after the final status on ${record.taskId}`;
    const id = update.artifact?.artifactId;
    if (record.artifactId === undefined) record.artifactId = id;
    else if (record.artifactId !== id) return `a second artifact ${id} on ${record.taskId}`;
    record.text += artifactText(update.artifact);
    record.chunks += 1;
    record.appendFlags.push(update.append);
    if (update.lastChunk) record.lastChunks += 1;
    return undefined;
  }
  if (payload?.$case === 'statusUpdate') {
    const update = payload.value;
    const message = update.status?.message;
    if (typeof update.metadata?.command === 'string') {
      record.commandReplies.push(message?.messageId ?? '');
      return undefined;
    }
    if (message) {
      if (record.finals.length > 0) return `a second final status on ${record.taskId}`;
      record.finals.push({ state: update.status!.state, text: messageText(message), messageId: message.messageId });
    }
    return undefined;
  }
  return undefined;
}

/** Which of `ids` appear how many times among the task's history message ids. */
export function historyCounts(task: Task): Map<string, number> {
  const counts = new Map<string, number>();
  for (const message of task.history) counts.set(message.messageId, (counts.get(message.messageId) ?? 0) + 1);
  return counts;
}

/** Nothing of the server's insides in a text meant for a person: no stack, no path, no URL, no secret. */
export function assertNoLeak(text: string, secrets: readonly string[] = []): void {
  for (const leak of [
    /\n\s*at\s/,
    /\bat .+:\d+:\d+/,
    /\/work\//,
    /node_modules/,
    /file:\/\//,
    /\.[cm]?[jt]s:\d+/,
    /https?:\/\//,
    /\b(RangeError|TypeError|ReferenceError|SyntaxError)\b/,
  ]) {
    assert.doesNotMatch(text, leak, `the message leaks internals: ${text}`);
  }
  assert.ok(!text.includes(process.cwd()), `the message names the working directory: ${text}`);
  for (const secret of secrets) assert.ok(!text.includes(secret), `the message contains a secret: ${text}`);
}

/** `PRAGMA integrity_check` and `foreign_key_check` on the database file, opened read-only. */
export function checkDatabaseFile(file: string): {
  integrity: string[];
  foreignKeyProblems: number;
  tasksInFlight: number;
} {
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    const integrity = (db.pragma('integrity_check') as { integrity_check: string }[]).map((row) => row.integrity_check);
    const foreignKeyProblems = (db.pragma('foreign_key_check') as unknown[]).length;
    const tasksInFlight = (db.prepare('SELECT COUNT(*) AS n FROM tasks WHERE state IN (1, 2)').get() as { n: number })
      .n;
    return { integrity, foreignKeyProblems, tasksInFlight };
  } finally {
    db.close();
  }
}

/** Nearest-rank percentile of `values` (ms), 0 when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** A short, safe description of whatever was thrown. */
export function errorText(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`.slice(0, 300);
  return String(error).slice(0, 300);
}
