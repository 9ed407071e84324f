/**
 * Deterministic conversation text and A2A objects for seeding stores and building requests,
 * so every run (and both sides of a comparison) sees the same words.
 */
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type Part, type Task } from '@a2a-js/sdk';

const WORDS = (
  'the task model agent reply history message context state command status server client request ' +
  'store write read cache event update stream turn answer question input output latency figure ' +
  'measure quick brown fox jumps over lazy dog while a careful reader checks every number twice ' +
  'before trusting what the benchmark prints about median percentile throughput and memory use'
).split(' ');

/** A small deterministic generator (mulberry32). */
export function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** 20 to 80 words and a full stop: a plausible chat message. */
export function text(random: () => number): string {
  const count = 20 + Math.floor(random() * 61);
  return Array.from({ length: count }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ') + '.';
}

export function textPart(body: string): Part {
  return { content: { $case: 'text', value: body }, mediaType: 'text/plain', filename: '', metadata: {} };
}

export function message(taskId: string, contextId: string, role: Role, body: string): Message {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role,
    parts: [textPart(body)],
    metadata: {},
    extensions: [],
    referenceTaskIds: [],
  };
}

/** A user message for a request: on a task when `target` is given, else starting a new one. */
export function userMessage(body: string, target?: { id: string; contextId: string }): Message {
  return message(target?.id ?? '', target?.contextId ?? '', Role.ROLE_USER, body);
}

/** An INPUT_REQUIRED task of `length` alternating user/agent messages. */
export function seededTask(length: number, random: () => number): Task {
  const id = randomUUID();
  const contextId = randomUUID();
  const history = Array.from({ length }, (_, i) =>
    message(id, contextId, i % 2 === 0 ? Role.ROLE_USER : Role.ROLE_AGENT, text(random)),
  );
  return {
    id,
    contextId,
    status: { state: TaskState.TASK_STATE_INPUT_REQUIRED, message: undefined, timestamp: new Date().toISOString() },
    artifacts: [],
    history,
    metadata: {},
  };
}

/** The text of a message's text parts. */
export function textOf(m: Message | undefined): string {
  return (m?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
}

/** `t0 t1 ... t{n-1}`: a reply whose words say their own position, to check order. */
export function numberedReply(tokens: number): string {
  return Array.from({ length: tokens }, (_, i) => `t${i}`).join(' ');
}
