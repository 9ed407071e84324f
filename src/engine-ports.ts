/**
 * The engine's contracts (`runtime/engine.ts`): what it shares with the parts it is built from
 * (writes, cancels, the turn stream), what starts turns through it (queued messages, command
 * turns, approvals, schedules), and what the folders of commands, skills and agents start
 * through it (sub-tasks, a command's inline turn, delegations). Declared here, below the
 * runtime, so that none of them imports the engine, and the plugin folders nothing of runtime/.
 */
import type { Message, StreamResponse, Task, TaskState } from '@a2a-js/sdk';
import type { AgentExecutionEvent, ServerCallContext } from '@a2a-js/sdk/server';
import type { Appended, Coordination, TaskEdit, TaskSnapshot, TurnWrite } from './ports.js';
import type { ToolOutcome, ToolTurn } from './tools/index.js';

// ---- The engine and its parts

/** What the engine reads and writes tasks through: the store, every write an append to the task's log. */
export interface EngineStore {
  read(taskId: string, context: ServerCallContext): Promise<TaskSnapshot | undefined>;
  load(taskId: string, context: ServerCallContext): Promise<Task | undefined>;
  create(task: Task, context: ServerCallContext): Promise<Appended>;
  append(
    taskId: string,
    context: ServerCallContext,
    events: readonly AgentExecutionEvent[],
    turn?: TurnWrite,
  ): Promise<Appended>;
  /** `decide` must be pure: it may run more than once for one write, and only its last answer is stored. */
  modify(
    taskId: string,
    context: ServerCallContext,
    decide: (task: Task) => Promise<TaskEdit | undefined> | TaskEdit | undefined,
  ): Promise<Appended | undefined>;
  /** Whether `modify` accepts the message claim an edit carries (`TaskEdit.claim`), in the claims' own table. */
  readonly recordsClaims?: boolean;
}

/** How a turn ended, for whoever waits on turns (sub-task notes). */
export interface TurnEnd {
  task: Pick<Task, 'id' | 'metadata'>;
  state: TaskState;
  /** What the final status message says. */
  text: string;
  /** The context of the request that started the turn; none for a turn ended by recovery. */
  context: ServerCallContext | undefined;
}

/** What starts or stops turns through the engine, without the rest of it. */
export interface TurnStarter {
  readonly coordination: Coordination;
  /** Whether a turn is starting or running on the task, on any instance. */
  isBusy(taskId: string): Promise<boolean>;
  startTurn(message: Message, context: ServerCallContext, options?: TurnOptions): Promise<StartedTurn>;
  /** `/stop` (CMD-32), wherever the turn runs. */
  stop(taskId: string): Promise<void>;
}

/** One model turn in flight on a task, on this instance (see `TaskEngine`). */
export interface Turn {
  readonly taskId: string;
  /** Its lease's epoch (`Coordination.acquireTurn`): every write of the turn is checked against it. */
  readonly epoch: number;
  /**
   * Aborted only by `TaskEngine.abortTurn` (cancel, stop, shutdown, a failed or fenced stream),
   * its reason a `TurnAbortReason` (`runtime/turn/turns.ts`); the model request listens to it.
   */
  readonly abort: AbortController;
  /** The context of the request that started the turn, if the SDK gave one: its scope is where a canceled turn's end is stored. */
  readonly context: ServerCallContext | undefined;
}

/** A turn running here, as the engine keeps it. */
export interface RunningTurn extends Turn {
  readonly context: ServerCallContext;
  /** Resolves once the turn has ended and its end is stored (or could not be). */
  done: Promise<void>;
  /** A write was refused because another instance took the task over: nothing more of the turn is stored. */
  fenced?: boolean;
}

// ---- Starting turns

/** A turn as its caller sees it, once started: its task and its events. */
export interface StartedTurn {
  taskId: string;
  /**
   * The turn's events as its task's log holds them, from the turn's task event to its final
   * status, with every other event of the task in between (command replies, CMD-8). Ends early
   * with the turn's error when its final status could not be stored. Read it once.
   */
  events: AsyncGenerator<StreamResponse, void, undefined>;
  /** Resolves once the turn has ended and its end is stored (or could not be); never rejects. */
  done: Promise<void>;
  /** For a caller that does not read `events`: lets go of them (the turn runs on). */
  detach(): void;
}

/** What starting a turn takes besides its message. */
export interface TurnOptions {
  /** A turn resumed after `/approve` or `/deny`: counted under the limit, never refused by it. */
  pastLimit?: boolean;
  /**
   * Called with the turn's task id once the turn holds the task's lease, before anything of the
   * turn is stored (a new task's id is known to nobody else yet): `SendMessage`'s push config.
   */
  beforeTurn?: (taskId: string) => Promise<void>;
  /**
   * The id a new task takes (a message naming no task): a scheduled run's, chosen with its claim,
   * so that a run whose task exists is known to have begun (`runtime/schedules/`).
   */
  newTaskId?: string;
  /** The task's lease, taken already by the caller (a queued message's turn): given back if the turn cannot start. */
  heldEpoch?: number;
  /** A message sent to its task: refused as busy (`turn_in_progress`) while messages wait in the task's queue too. */
  unlessQueued?: boolean;
  /**
   * A2A 1.1's `ifGenerationMatch`: the generation the task must be at, checked on the task as
   * read and again once the turn holds its lease (no other turn writes then); otherwise refused
   * (`task_generation_mismatch`). Ignored for a new task, as the draft says.
   */
  ifGeneration?: number;
  /**
   * Messages stored before the turn's message, in its opening write, decided on the task as the
   * turn reads it (none for a new task): a `rollback` message's rewind mark.
   */
  opening?: (task: Task | undefined) => Message[];
}

// ---- What command files, skills and agents start: sub-tasks, inline turns, delegations

/** The agent a sub-task runs as, kept in its metadata (`AGENT_KEY`, read by `runtime/agent-run.ts`). */
export interface AgentRun {
  name: string;
  /** 1 for a sub-agent of a conversation, 2 for one of its sub-agents, ... */
  depth: number;
  systemPrompt: string;
  mayDelegate: boolean;
}

/** What starting a sub-task takes besides its parent and its instruction. */
export interface SubtaskOptions {
  /** The call that asked for the sub-task: the sub-task belongs to the same user and tenant. */
  callContext: ServerCallContext;
  /** `provider:model` to run on; default: the parent's model. Must be offered. */
  model?: string;
  /** A short label for logs and notes, e.g. the command that started it. */
  label?: string;
  /** The only tools the sub-task may call (`allowed-tools`, TOOL-3); all of them when absent. */
  allowedTools?: string[];
  /** `none`: the sub-task is sent only its instruction, not the parent's conversation. */
  context?: 'none';
  /**
   * The agent the sub-task runs as (the `delegate` tool, docs/agents.md): kept in its metadata
   * (`AGENT_KEY`), and its start is noted in the parent, as its end is.
   */
  agent?: AgentRun;
}

/**
 * Starts sub-tasks: a new A2A task in the parent's context whose one model turn works on an
 * instruction. `start` returns as soon as the sub-task is stored and its turn has begun; it
 * does not wait for the turn (a command replies at once with the sub-task's id, CMD-30).
 * Implemented by `runtime/subtasks.ts`.
 */
export interface SubtaskStarter {
  /** Starts a sub-task of `parent`; returns its id. Throws `HarnessError('model_unknown')` for a model not offered. */
  start(parent: Task, instruction: string, options: SubtaskOptions): Promise<string>;
}

/** How a command's prompt runs inline (CMD-38): what it is, and the file's grants for its turn. */
export interface CommandTurnOptions {
  callContext: ServerCallContext;
  /** The command as typed without its arguments (`/review`): marks the turn's message as the command's. */
  label: string;
  /** `provider:model` (or a model name alone) the turn runs on; default: the task's model. Must be offered. */
  model?: string;
  /** The only tools the turn may call (`allowed-tools`, TOOL-3); all of them when absent. */
  allowedTools?: string[];
  /** The command message: its `tiny-harness/while-busy` says what happens while a turn runs on the task. */
  message: Message;
}

/**
 * What a command's inline turn comes to, decided when the command is answered: `busy`, a turn
 * runs on the task and the command message does not ask to queue (nothing will start); else
 * `run` starts the turn once the reply is stored (`CommandResult.followUp`), or queues it
 * behind the running turn (`queued`), and yields its events.
 */
export type CommandTurn =
  { kind: 'busy' } | { kind: 'start' | 'queued'; run: () => AsyncGenerator<StreamResponse, void, undefined> };

/** Runs a command's prompt as a turn on the task it was sent to (CMD-38), as its own message (`runtime/turn/command-turns.ts`). */
export interface CommandTurnStarter {
  /** Throws `CommandUsageError` for a model not offered or a `while-busy` value not known. */
  prepare(task: Task, prompt: string, options: CommandTurnOptions): Promise<CommandTurn>;
}

/** What starts what a command file or a skill asks for: a sub-task (`context: fork`), or a turn inline. */
export type CommandStarter = SubtaskStarter & CommandTurnStarter;

/** An agent as a delegation runs it: the part of its definition the sub-task needs. */
export interface DelegatedAgent {
  name: string;
  /** The sub-task's system prompt. */
  prompt: string;
  /** `provider:model` or a model's name; none: the parent's model. */
  model?: string;
  /** The only tools it may call (TOOL-3); none: all of them (`delegate` only when `mayDelegate`). */
  tools?: string[];
  /** Whether its own turns are offered `delegate` (its `tools` name it). */
  mayDelegate: boolean;
}

/** Runs delegations to their end (`runtime/delegations.ts`), for the `delegate` tool (`agents/`). */
export interface Delegator {
  /**
   * Whether a turn of this task may delegate: within `agents.maxDepth`, and, for a sub-agent,
   * when its definition allows it (`AgentRun.mayDelegate`).
   */
  mayDelegate(turn: Pick<ToolTurn, 'metadata'>): boolean;
  /**
   * Starts `agent` on `prompt` as a sub-task of the turn's task, waits until it ends (on any
   * instance) and resolves with its reply as the call's outcome. `signal` aborting cancels the
   * sub-task. Never throws: a refusal or a failure is a failed outcome the model reads.
   */
  delegate(turn: ToolTurn, agent: DelegatedAgent, prompt: string, signal: AbortSignal): Promise<ToolOutcome>;
}
