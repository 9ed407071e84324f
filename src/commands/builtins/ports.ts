import type { Message, StreamResponse, Task, TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { CompactionPoint, ToolCallData } from '../../wire.js';
import type { ServerCallContext } from '@a2a-js/sdk/server';

/**
 * What the built-in commands need from the harness, and no more: `commands/` knows the SDK,
 * not the model loop, so the harness's runtime implements these (dependencies point one way).
 */
export interface ModelChoice {
  id: string;
  description?: string;
}

export interface ModelControl {
  /** The models offered now, in the order to show. */
  offered(): ModelChoice[];
  /** The task's current model and the models it may choose from, in the order to show. */
  describe(task: Task, callContext: ServerCallContext): Promise<{ current: string; choices: ModelChoice[] }>;
  /**
   * Makes `modelId` the task's model, and the caller's latest choice in the task's context;
   * false, changing nothing, when it is not offered.
   */
  choose(task: Task, modelId: string, callContext: ServerCallContext): Promise<boolean>;
}

export interface UsageLine {
  model: string;
  inputTokens: number;
  outputTokens: number;
}

export interface TaskReport {
  /** The state's protocol name, e.g. TASK_STATE_INPUT_REQUIRED. */
  state: string;
  model: string;
  usage: UsageLine[];
  turnRunning: boolean;
  /** The task's sub-tasks in start order, with their states' protocol names. */
  subtasks: Array<{ id: string; state: string }>;
  /** The messages waiting in the task's queue, the next first, each with its first words. */
  queued: Array<{ messageId: string; preview: string }>;
  /** How many of the task's push notifications ran out of retries (kept as failed); absent when none. */
  pushFailed?: number;
}

export interface TaskReporter {
  report(task: Task, callContext: ServerCallContext): Promise<TaskReport>;
}

export interface SubtaskControl {
  /** Starts a sub-task of `parent` working on `instruction` with the parent's model; returns its id at once. */
  start(
    parent: Task,
    instruction: string,
    options: { callContext: ServerCallContext; label?: string },
  ): Promise<string>;
}

/** One tool server as `/tools` shows it. */
export interface ToolServerReport {
  name: string;
  /** Its first attempt to connect is under way (turns meanwhile go on without its tools). */
  connecting: boolean;
  connected: boolean;
  /** Why it is not connected, when an attempt failed (a short line, no path or secret). */
  failure?: string;
  /** Its tools under the names the model calls them by; `asks`: their calls wait for approval (CMD-33). */
  tools: Array<{ name: string; description: string; asks: boolean }>;
}

export interface ToolDirectory {
  /** The configured servers in config order, as they stand now (nothing is connected by asking). */
  servers(): ToolServerReport[];
}

/** Tool calls waiting for a person's approval (CMD-33), as `/approve` and `/deny` need them. */
export interface ToolApprovalControl {
  /** The task's calls still waiting for an answer, in the order the model asked for them; none when its turn is not paused. */
  unanswered(task: Task): ToolCallData[];
  /** Resumes the task's turn, every waiting call answered (the answers are in the task's history by then): the turn's events. */
  resume(task: Task, callContext: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined>;
  /** Lets the caller's later calls to these tools in the task's conversation run without asking (TOOL-5). */
  allowAlways(task: Task, tools: readonly string[], callContext: ServerCallContext): Promise<void>;
  /** The tools the caller allowed for good in the task's conversation, by name, with when (ISO 8601). */
  allowed(task: Task, callContext: ServerCallContext): Promise<Array<{ tool: string; grantedAt: string }>>;
  /** Takes back the caller's grant of a tool in the task's conversation: false when there was none. */
  revoke(task: Task, tool: string, callContext: ServerCallContext): Promise<boolean>;
}

/** Running turns, as `/stop` needs them (CMD-32). */
export interface TurnControl {
  /** Whether a turn of the task is starting or running, on any instance. */
  isRunning(task: Task): Promise<boolean>;
  /** Stops the task's turn, wherever it runs: it ends as a finished turn ends, keeping what it wrote. */
  stop(task: Task): Promise<void>;
}

/** What summarising a conversation came to (CMD-36): the point to store, or why there is none. */
export type CompactionAttempt =
  | { kind: 'compacted'; point: CompactionPoint; message: Message }
  /** Nothing to summarise: the conversation after the latest point is all recent. */
  | { kind: 'nothing' }
  /** The model failed or timed out: why, in words fit to show the user. */
  | { kind: 'failed'; reason: string };

/** Compaction of a task's conversation, as `/compact` needs it (CMD-36). */
export interface ConversationCompaction {
  /** Summarises the task's conversation with its model; stores nothing (the command stores the point with its reply). */
  compact(task: Task, options: { focus?: string; callContext: ServerCallContext }): Promise<CompactionAttempt>;
  /** Whether the conversation as stored moved on from the one `seen` (a message that the model reads joined it, or a rewind). */
  movedOn(seen: Task, stored: Task): boolean;
}

/** The project's instruction files, as `/memory` lists them. */
export interface InstructionFiles {
  /** Every configured file in the configured order, as read now. */
  listing(): InstructionFileListing[];
  /** The most characters one file may have (`instructionsMaxChars`). */
  readonly maxChars: number;
}

/** What `/fork` made (CMD-37), or why it made nothing. */
export type ForkOutcome =
  | { taskId: string; contextId: string; messages: number }
  | {
      /** `turn_running`: the conversation is still being written; `no_such_point`: fewer points than asked for; `nothing_to_fork`: an empty conversation. */
      refused: 'turn_running' | 'no_such_point' | 'nothing_to_fork';
      /** How many points the task has (for `no_such_point`). */
      points?: number;
    };

/** Copies of conversations, as `/fork` needs them (CMD-37). */
export interface ForkControl {
  /**
   * Copies the conversation the task's model sees (all of it, or up to point `n`) into a new
   * task in a new context of the caller's, with the task's model.
   */
  fork(task: Task, n: number | undefined, callContext: ServerCallContext): Promise<ForkOutcome>;
}

/** What the next turn of a task would send its model, as `/context` shows it (sizes in characters). */
export interface ContextReport {
  model: string;
  budgetChars: number;
  usedChars: number;
  /** `usedChars / budgetChars`, at most 1 (0 with no bound). */
  share: number;
  parts: { systemPrompt: number; instructions: number; tools: number; summary: number; history: number };
  /** The provider's count of the last turn's input tokens, when known. */
  tokens?: { input: number; model: string };
}

export interface ContextReporter {
  report(task: Task, callContext: ServerCallContext): Promise<ContextReport>;
}

/** A point the conversation can be taken back to (CMD-37): just before the n-th newest user message. */
export interface ConversationPoint {
  /** 1 for the newest user message. */
  n: number;
  messageId: string;
  /** The message's first line, shortened. */
  preview: string;
  text: string;
}

/** Rewind points and marks (CMD-37), as `/rewind` needs them; the runtime computes them (`src/conversation/`). */
export interface ConversationRewinds {
  /** The points of the history as it stands (rewound messages left out), newest first. */
  points(history: readonly Message[]): ConversationPoint[];
  /**
   * Taking the conversation back to point n: the point, the ids it hides (the point's message
   * and every visible message after it) and the rewind mark to store; undefined without point n.
   */
  rewind(
    task: Pick<Task, 'id' | 'contextId' | 'history'>,
    n: number,
  ): { point: ConversationPoint; hidden: string[]; mark: Message } | undefined;
}

/** An instruction file as `/memory` lists it (its reply data: `{ files: InstructionFileListing[] }`), in the configured order. */
export interface InstructionFileListing {
  /** As configured (`AGENTS.md`), never resolved to more of the machine's paths than that. */
  path: string;
  /** Its size in characters; 0 when missing. */
  chars: number;
  /** `loaded`: sent to the model; `missing`: no file to read there (skipped); `too-large`: over `instructionsMaxChars`, refused. */
  status: 'loaded' | 'missing' | 'too-large';
  /** Why something at the path could not be read (a folder, permission denied); absent for a plain missing file. */
  problem?: string;
}

/** A schedule as `/schedule` shows it (issue 39); times are ISO 8601, in UTC. */
export interface ScheduleView {
  id: string;
  /** `<when>` as it was given: a cron expression, `every 2h`, `at 2026-12-24T17:00`; `hook` for a trigger URL. */
  when: string;
  timeZone: string;
  prompt: string;
  paused: boolean;
  /** Each run in a new context of its own. */
  newContext: boolean;
  /** Its next due times, up to three; none once an `at` schedule has run. */
  next: string[];
  lastRun?: { dueAt: string; taskId?: string };
  /** The latest due times missed beyond `schedules.catchUpMs` (the harness was down), recorded. */
  lastSkip?: { dueAt: string; missed: number };
  /** A hook's trigger URL, its secret in it: only in the reply that made or rotated it (the schedules keep its hash alone). */
  url?: string;
  /** How many push configs were given with `/schedule` (their URLs and tokens are not shown); absent: none. */
  webhooks?: number;
}

/** What `/schedule <when> <prompt>` asks for. */
export interface ScheduleRequest {
  when: string;
  prompt: string;
  /** An IANA zone (`tz=Europe/Paris`); default the server's (`schedules.timeZone`). */
  timeZone?: string;
  newContext: boolean;
  /** The push config the `/schedule` message carried (`configuration.taskPushNotificationConfig`): each run's too. */
  pushConfig?: TaskPushNotificationConfig;
}

/** Schedules, as `/schedule` and `/unschedule` need them: each call is the caller's own. */
export interface ScheduleControl {
  /** Stores a schedule of the caller's, run in the task's context with the task's model; or why not, in a sentence (`code`: `when_invalid`, `too_many`). */
  create(
    task: Task,
    request: ScheduleRequest,
    callContext: ServerCallContext,
  ): Promise<ScheduleView | { refused: string; code: string }>;
  list(callContext: ServerCallContext): Promise<ScheduleView[]>;
  /** False when the caller has no such schedule. */
  remove(id: string, callContext: ServerCallContext): Promise<boolean>;
  /** The schedule as it becomes, or undefined when the caller has no such schedule. */
  setPaused(id: string, paused: boolean, callContext: ServerCallContext): Promise<ScheduleView | undefined>;
  /** Stores a hook of the caller's: run by a POST to the URL in the view (`url`); or why not (`too_many`). */
  createHook(
    task: Task,
    request: Omit<ScheduleRequest, 'when' | 'timeZone'>,
    callContext: ServerCallContext,
  ): Promise<ScheduleView | { refused: string; code: string }>;
  /** Gives the caller's hook a new secret (the old URL answers 404 from now on); undefined when the caller has no such hook. */
  rotateHook(id: string, callContext: ServerCallContext): Promise<ScheduleView | undefined>;
}
