import type { Message } from '@a2a-js/sdk';
import { CommandUsageError, type CommandDefinition, type CommandResult } from '@tiny-harness/commands-extension';
import { isInFlight, REPLY_ERROR_KEY } from '../../wire.js';
import type { ConversationPoint, ConversationRewinds, TurnControl } from './ports.js';

/** The most points the listing shows. */
const LISTED = 20;

/**
 * `/rewind [n]` (CMD-37): without n, lists the points the conversation can be taken back to,
 * the newest first; with n, takes it back to just before the n-th newest user message. What
 * followed leaves the model's history and `GetTask`'s, kept in the store behind a rewind mark
 * stored with the reply (one write). Refused while a turn runs: it would go on writing into a
 * conversation taken from under it.
 */
export function rewindCommand(turns: Pick<TurnControl, 'isRunning'>, rewinds: ConversationRewinds): CommandDefinition {
  return {
    name: 'rewind',
    description: 'List the points to take the conversation back to, or take it back to just before message n',
    argumentHint: '[<n>]',
    handler: async ({ args, task, message }) => {
      if (await turns.isRunning(task)) return turnRunning();
      // The command itself is not rewound: it stays, with its reply, after the mark.
      const history = withoutCommand(task.history, message);
      if (!args) return listing(rewinds.points(history));
      const n = pointNumber(args);
      const rewound = rewinds.rewind({ ...task, history }, n);
      if (!rewound) {
        const count = rewinds.points(history).length;
        throw new CommandUsageError(
          count === 0
            ? 'Nothing to rewind: this task holds no message of yours yet.'
            : `There is no point ${n}: this conversation has ${count} (send /rewind to list them).`,
        );
      }
      const { point, hidden, mark } = rewound;
      return {
        text: `Rewound to before message ${n}; ${hidden.length} message${hidden.length === 1 ? '' : 's'} hidden (kept in the store). The message was:\n${point.text}`,
        data: { rewoundTo: { n, messageId: point.messageId, text: point.text }, hidden: hidden.length },
        records: [mark],
        // Under the write lock: refused if a turn started or the conversation moved on since it was read.
        recheck: (stored) => {
          if (isInFlight(stored.status?.state)) return turnRunning();
          const again = rewinds.rewind({ ...stored, history: withoutCommand(stored.history, message) }, n);
          if (again?.point.messageId === point.messageId && sameIds(again.hidden, hidden)) return undefined;
          return {
            text: 'The conversation changed while /rewind ran; nothing was rewound. Send /rewind to see the points as they are now.',
            data: { [REPLY_ERROR_KEY]: 'conversation_changed' },
          };
        },
      };
    },
  };
}

function listing(points: ConversationPoint[]): CommandResult {
  const shown = points.slice(0, LISTED).map(({ n, messageId, preview, text }) => ({ n, messageId, preview, text }));
  if (shown.length === 0)
    return { text: 'Nothing to rewind: this task holds no message of yours yet.', data: { points: [] } };
  const lines = shown.map((point) => `${String(point.n).padStart(3)}. ${point.preview}`);
  return {
    text: `Points to take the conversation back to, the newest first:\n${lines.join('\n')}\nSend /rewind <n> to go back to just before message n.`,
    data: { points: shown },
  };
}

function turnRunning(): CommandResult {
  return {
    text: 'A turn is running on this task: nothing was rewound. Send /stop first, or wait for it to end.',
    data: { [REPLY_ERROR_KEY]: 'turn_running' },
  };
}

/** n as typed: a whole number from 1. */
function pointNumber(args: string): number {
  if (!/^\d+$/.test(args) || Number(args) < 1)
    throw new CommandUsageError(`"${args}" is not a point: send /rewind to list them, then /rewind <n>, n from 1.`);
  return Number(args);
}

/** The history without the command message at its end (as the handler and the recheck are given it). */
function withoutCommand(history: readonly Message[], command: Message): Message[] {
  return history.at(-1)?.messageId === command.messageId ? history.slice(0, -1) : [...history];
}

function sameIds(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}
