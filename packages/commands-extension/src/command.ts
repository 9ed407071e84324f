import type { Message, StreamResponse, Task, TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { ArgumentValue } from './wire.js';
import type { ServerCallContext } from '@a2a-js/sdk/server';

/** What a command handler is given: the parsed command and the task it runs on. */
export interface CommandInvocation {
  /** The command's registered name. */
  name: string;
  /** The argument text, white space trimmed; "" when there are none (CMD-1). */
  args: string;
  /** The task as it was stored before the command ran. */
  task: Task;
  /** The command message itself. */
  message: Message;
  /** The call's context: its user, tenant and requested extensions. */
  callContext: ServerCallContext;
  /**
   * The push-notification config the message carried (`configuration.taskPushNotificationConfig`),
   * as sent, once stored with the command's task (`CommandCallsOptions.pushConfig`): a command
   * whose work goes on later, on other tasks (a schedule's runs), may keep it for that work.
   */
  pushConfig?: TaskPushNotificationConfig;
}

/** What a command answers. `text` becomes the reply's first part (CMD-5). */
export interface CommandResult {
  /** Human-readable reply. */
  text: string;
  /** Machine-readable result, sent as a data part after the text when present. */
  data?: Record<string, unknown>;
  /** The id of the sub-task the command created, if it created one (CMD-30). */
  taskRef?: string;
  /**
   * Work the command starts on its task once its reply is stored, such as a turn resumed by
   * `/approve` (CMD-33): its events, after the task's own first event. A streaming client
   * follows them after the reply; otherwise they are read in the background.
   */
  followUp?: () => AsyncGenerator<StreamResponse, void, undefined>;
  /**
   * Messages stored with the reply, in the same write, after the command and before the reply:
   * what the command did to the conversation, such as a summary that replaces its beginning.
   */
  records?: Message[];
  /**
   * Checked on the task as stored, under its write lock, just before the reply is stored: a
   * handler that worked on the task as it read it (a summary written meanwhile) returns here the
   * result to send instead when the task has moved on since, and nothing to send its own.
   */
  recheck?: (stored: Task) => CommandResult | undefined;
}

/** Answers one command: its reply text (and data), or a `CommandUsageError` the user reads. */
export type CommandHandler = (invocation: CommandInvocation) => Promise<CommandResult> | CommandResult;

/**
 * Who a command is offered to: `public`, anyone (the public card lists it); `authenticated`,
 * signed-in callers only: it is listed on the extended card alone, and to anyone else it is no
 * command at all (CMD-3: the message reaches the model as an unregistered name's would).
 */
export type CommandVisibility = 'public' | 'authenticated';

/**
 * Which card is built: the public one (`/.well-known/agent-card.json`) lists the commands
 * offered to anyone; the extended one (`GetExtendedAgentCard`, signed-in callers) lists them all.
 */
export type CardAudience = 'public' | 'authenticated';

/** A command as registered: what the card shows plus the code that runs it. */
export interface CommandDefinition {
  name: string;
  description: string;
  /** Default `public`; the registry's own `visibility` option decides over it. */
  visibility?: CommandVisibility;
  /** Shown after the name in completions, e.g. `[<model>]`. Defaults to "" (CMD-15). */
  argumentHint?: string;
  /**
   * The values each argument can take now, by position (the command-arguments extension):
   * read each time the card is built, for the card's audience. Leave out an argument whose values are not known.
   */
  argumentValues?: (audience: CardAudience) => ReadonlyArray<readonly ArgumentValue[] | undefined>;
  /**
   * The handler reads the task as stored and its reply is stored in the same step, under the
   * task's write lock (`DecidedUpdate`): for a command whose answer depends on what another
   * command sent at once may change. Such a handler must be quick and must not change the task.
   */
  decidesUnderLock?: boolean;
  handler: CommandHandler;
}

/**
 * A mistake the user can fix: bad arguments, an unknown choice. Its message is sent back as
 * the reply as it is (CMD-12), so it should say what went wrong and what would work. Any
 * other error thrown by a handler is answered with a generic message and logged.
 */
export class CommandUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CommandUsageError';
  }
}
