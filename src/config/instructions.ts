/** The `instructions` and `instructionsMaxChars` keys of the config file: the project's instruction files (docs/commands.md, "/memory"). */
import { z } from 'zod';

/** The file agents of many kinds read for a project's instructions, in the folder the harness starts in. */
export const DEFAULT_INSTRUCTIONS: readonly string[] = ['AGENTS.md'];
/** About 12,000 tokens: a thorough project guide fits; a file pasted in by mistake does not eat the context. */
export const DEFAULT_INSTRUCTIONS_MAX_CHARS = 50_000;

export const instructionsSchema = z
  .array(z.string().trim().min(1, 'a path must not be empty'))
  .max(100)
  .refine((paths) => new Set(paths).size === paths.length, 'lists a file twice')
  .default(() => [...DEFAULT_INSTRUCTIONS])
  .describe(
    "The project's instruction files, whose texts are sent after `systemPrompt` in this order on every turn; relative paths are read from the folder the harness starts in. A file is read again when it changes; a missing one is skipped; `/memory` lists them. `[]` reads none.",
  );

export const instructionsMaxCharsSchema = z
  .number()
  .int('must be a whole number of characters')
  .min(1, 'must be at least 1')
  .max(10_000_000)
  .default(DEFAULT_INSTRUCTIONS_MAX_CHARS)
  .describe(
    'The most characters one instruction file may have (about 4 make a token); a larger one is left out, said in the log and by `/memory`.',
  );
