/** The `agents` key of the config file: how far sub-agents may go (docs/agents.md). */
import { z } from 'zod';

export const agentsSchema = z.strictObject(
  {
    maxDepth: z
      .number()
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(10)
      .default(2)
      .describe(
        "How deep sub-agents may nest: a conversation's sub-agents are at depth 1; one of them may delegate in turn (depth 2) only when its `tools` list `delegate`, and none beyond this depth.",
      ),
    maxParallel: z
      .number()
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(64)
      .default(4)
      .describe(
        "The most `delegate` calls of one turn that run at once; the model's other calls wait for one to end. Each sub-agent's turn counts against `maxTurnsInFlight` too.",
      ),
    timeoutMs: z
      .number()
      .int('must be a whole number of milliseconds')
      .min(1000, 'must be at least 1000')
      .max(86_400_000, 'must be at most a day')
      .default(1_800_000)
      .describe(
        "The longest one `delegate` call may take, in milliseconds (30 minutes by default), waiting for a place and for approvals of the sub-agent's calls included; past it the sub-task is canceled and the model told. A model step that offers `delegate` is bounded by `modelTimeoutMs` plus this, instead of plus `toolTimeoutMs`.",
      ),
  },
  // A typo names what would have been right.
  {
    error: (issue) =>
      issue.code === 'unrecognized_keys' ? 'unknown key (allowed here: maxDepth, maxParallel, timeoutMs)' : undefined,
  },
);
