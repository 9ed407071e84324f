/** The Commands extension v1: its URI and the metadata keys it puts on replies. */
export const COMMANDS_EXTENSION_URI = 'https://madarauchiha-314.github.io/tiny-harness/a2a/ext/commands/v1';

/** Metadata key naming the command a reply answers (CMD-4, CMD-5). */
export const COMMAND_KEY = 'command';

/** Metadata key holding the id of the sub-task a command created (CMD-4, CMD-30). */
export const TASK_REF_KEY = 'task_ref';
