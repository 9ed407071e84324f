import type { CommandDefinition, CommandResult } from '@tiny-harness/commands-extension';
import type { ConversationCompaction, TurnControl } from './ports.js';
import { isInFlight, REPLY_ERROR_KEY } from '../../wire.js';

/**
 * `/compact [<focus>]` (CMD-36): the task's model summarises the conversation so far, the focus
 * steering what the summary keeps; later turns send the summary instead of what it covers. The
 * compaction point is stored in the same write as the reply, and only if the conversation has
 * not moved on while the summary was written. A resend is answered with the first reply (CMD-34).
 */
export function compactCommand(turns: TurnControl, compaction: ConversationCompaction): CommandDefinition {
  return {
    name: 'compact',
    description: 'Summarise the conversation so far to free context; the focus says what the summary should keep',
    argumentHint: '[<focus>]',
    handler: async ({ args, task, callContext }) => {
      if (await turns.isRunning(task)) return turnRunning;
      const made = await compaction.compact(task, { focus: args || undefined, callContext });
      if (made.kind === 'nothing')
        return refusal(
          'nothing_to_compact',
          'Nothing to compact: the conversation since its last summary is short enough to keep as it is.',
        );
      if (made.kind === 'failed')
        return refusal(
          'model_failed',
          `The conversation was not compacted, and is unchanged: ${made.reason} Try again, or choose another model with /model.`,
          { reason: made.reason },
        );
      const { point } = made;
      return {
        text: `Compacted the conversation: ${chars(point.charsBefore)} → ${chars(point.charsAfter)} characters. A summary by ${point.model} replaces its earlier messages; your last request before them and the latest messages are kept as they were.`,
        data: { compaction: point },
        records: [made.message],
        recheck: (stored) => {
          if (isInFlight(stored.status?.state)) return turnRunning;
          if (compaction.movedOn(task, stored))
            return refusal(
              'conversation_changed',
              'The conversation was not compacted: it moved on while the summary was written. Nothing was changed; send /compact again.',
            );
          return undefined;
        },
      };
    },
  };
}

const turnRunning = refusal(
  'turn_running',
  'The conversation was not compacted: a turn is running on this task. Send /compact again once it has ended (or /stop it first).',
);

function refusal(code: string, text: string, data: Record<string, unknown> = {}): CommandResult {
  return { text, data: { ...data, [REPLY_ERROR_KEY]: code } };
}

function chars(count: number): string {
  return count.toLocaleString('en-US');
}
