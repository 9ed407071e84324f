/** The `compact` key of the config file: when and how a conversation is summarised to fit its model's budget (CMD-36). */
import { z } from 'zod';

/** 0.8: compacting before the budget is full leaves room for the reply and the next few messages. */
export const DEFAULT_COMPACT_AUTO_AT = 0.8;
/** 0.1: the latest exchanges stay word for word, and a summary still frees most of the budget. */
export const DEFAULT_COMPACT_TAIL_SHARE = 0.1;

export const compactSchema = z
  .strictObject(
    {
      auto: z
        .boolean()
        .default(true)
        .describe(
          "Whether a turn whose conversation passes `autoAt` of its model's budget (`contextChars`) first has the task's model summarise the earlier messages, as `/compact` does; its stream says so in a notice (`compacted`). `false`: the oldest messages are cut instead, with a notice (`context-cut`).",
        ),
      autoAt: z
        .number()
        .gt(0, 'must be more than 0')
        .max(1, 'must be at most 1 (the whole budget)')
        .default(DEFAULT_COMPACT_AUTO_AT)
        .describe(
          "The share of the model's budget (`contextChars`, the provider's where set), more than 0 and at most 1, past which a turn compacts the conversation first (with `auto`).",
        ),
      tailShare: z
        .number()
        .min(0, 'must be 0 or more')
        .max(0.9, 'must be at most 0.9')
        .default(DEFAULT_COMPACT_TAIL_SHARE)
        .describe(
          "The share of the model's budget that the latest messages, kept word for word, may take when the conversation is compacted (never more than half of the messages after the last summary). The last user message a summary covers is always kept too.",
        ),
    },
    // A typo names what would have been right.
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys' ? 'unknown key (allowed here: auto, autoAt, tailShare)' : undefined,
    },
  )
  .refine((value) => value.tailShare < value.autoAt, {
    message: 'tailShare must be less than autoAt: the kept messages alone would call for another compaction',
    path: ['tailShare'],
  });
