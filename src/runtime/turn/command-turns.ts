/**
 * File commands and skills run inline (CMD-38): the command's expanded prompt is a user message of
 * its own, marked as the command's (`FROM_COMMAND_KEY`), run as a turn on the task the command was
 * sent to once its reply is stored. While a turn runs there, it does what an ordinary message does
 * (spec/while-busy-extension-v1.md): refused by default (the reply says nothing started), or
 * queued, as the command message's `tiny-harness/while-busy` asks.
 */
import { randomUUID } from 'node:crypto';
import { Role, type Message, type StreamResponse, type Task } from '@a2a-js/sdk';
import { CommandUsageError, isCommandExchange } from '../../commands/index.js';
import { HarnessError, hasErrorCode, isHarnessError } from '../../errors.js';
import {
  FROM_COMMAND_KEY,
  fromCommandOf,
  fullModelId,
  NOTICE_KEY,
  textPart,
  WHILE_BUSY_KEY,
  type FromCommand,
  type WhileBusy,
} from '../../wire.js';
import type { CommandTurn, CommandTurnOptions, CommandTurnStarter, TurnStarter } from '../../engine-ports.js';
import type { ModelOffer } from '../task-models.js';
import { RESUME_NOTICE } from '../tool-approvals.js';
import { whileBusyOf, type TurnQueue } from './turn-queue.js';
import type { TurnLimit } from './turn-limit.js';

export interface CommandTurnsOptions {
  engine: Pick<TurnStarter, 'isBusy' | 'startTurn'>;
  /** Where a command asked to wait behind a running turn is queued; none: such a command is refused as busy. */
  queue?: Pick<TurnQueue, 'send'>;
  offer: ModelOffer;
  /** The bound on turns in flight: looked at before the reply says the turn starts. */
  limit?: Pick<TurnLimit, 'check'>;
  /** Told when a turn began on the task between the command's reply and its own turn (which then never starts). */
  onError: (error: unknown, what: string, taskId?: string) => void;
}

export class CommandTurns implements CommandTurnStarter {
  constructor(private readonly options: CommandTurnsOptions) {}

  async prepare(
    task: Task,
    prompt: string,
    { callContext, label, model, allowedTools, message }: CommandTurnOptions,
  ): Promise<CommandTurn> {
    const { engine, queue, onError } = this.options;
    const how = commandWhileBusy(message, queue !== undefined);
    const from: FromCommand = {
      command: label,
      ...(model !== undefined && { model: this.offered(model) }),
      ...(allowedTools !== undefined && { allowedTools }),
    };
    const busy = await engine.isBusy(task.id);
    if (busy && how === 'reject') return { kind: 'busy' };
    try {
      if (!busy) this.options.limit?.check();
    } catch (error) {
      if (!hasErrorCode(error, 'turns_at_limit')) throw error;
      throw new CommandUsageError(
        `${label} started nothing: this server is at its limit of running turns. Send it again in a few seconds.`,
      );
    }
    const turnMessage: Message = {
      messageId: randomUUID(),
      taskId: task.id,
      contextId: task.contextId,
      role: Role.ROLE_USER,
      parts: [textPart(prompt)],
      metadata: { [FROM_COMMAND_KEY]: from, ...(how !== 'reject' && { [WHILE_BUSY_KEY]: how }) },
      extensions: [],
      referenceTaskIds: [],
    };
    async function* run(): AsyncGenerator<StreamResponse, void, undefined> {
      try {
        yield* queue
          ? await queue.send(turnMessage, callContext)
          : (await engine.startTurn(turnMessage, callContext)).events;
      } catch (error) {
        // A turn began in the moment since the reply: refused as an ordinary message would be.
        if (!hasErrorCode(error, 'turn_in_progress')) throw error;
        onError(error, `starting the turn of ${label} (a turn began on the task first)`, task.id);
      }
    }
    return { kind: busy ? 'queued' : 'start', run };
  }

  /** The file's model as an offered `provider:model`; `model_unknown` otherwise (the command says which line). */
  private offered(model: string): string {
    const offered = this.options.offer.list().map((choice) => choice.id);
    const id = fullModelId(model, offered);
    if (!this.options.offer.has(id)) throw new HarnessError('model_unknown', `The model ${id} is not offered here.`);
    return id;
  }
}

/** The command message's while-busy: its own metadata, as an ordinary message's (`reject` without a queue). */
function commandWhileBusy(message: Message, queues: boolean): WhileBusy {
  try {
    return queues ? whileBusyOf(message) : 'reject';
  } catch (error) {
    if (isHarnessError(error)) throw new CommandUsageError(error.message);
    throw error;
  }
}

/**
 * The command whose inline turn this is (CMD-38), if any: the turn's own message, or, for a turn
 * resumed after `/approve` or `/deny`, the message that started the turn that paused. Its grants
 * hold for the whole turn (TOOL-3).
 */
export function commandOfTurn(history: readonly Message[], started: Message): FromCommand | undefined {
  if (started.metadata?.[NOTICE_KEY] !== RESUME_NOTICE) return fromCommandOf(started);
  for (let i = history.length - 1; i >= 0; i -= 1) {
    const message = history[i]!;
    if (message.role !== Role.ROLE_USER || isCommandExchange(message) || message.metadata?.[NOTICE_KEY] !== undefined)
      continue;
    return fromCommandOf(message);
  }
  return undefined;
}
