/** The `commands` key of the config file: what command files may do, and who each command is offered to. */
import * as z from 'zod';
import { visibilitySchema } from './mcp-servers.js';

const commandName = z.string().regex(/^[a-z][a-z0-9-]*$/, 'a command name: a-z, 0-9 and "-", starting with a letter');

/** Command files (docs/commands.md, CMD-38), and who each command is offered to (issue 38). */
export const commandsSchema = z.strictObject({
  allowShell: z
    .boolean()
    .default(false)
    .describe(
      "Whether command files' `` !`cmd` `` markers may run at all; each also needs its file's `allowed-tools` to grant it (`Bash(git status:*)`) and a `workspace.root` to run in. Off: such a command is refused and nothing of it runs.",
    ),
  visibility: z
    .record(commandName, visibilitySchema)
    .default({})
    .describe(
      'Who each command is offered to, by name (`{"deploy": "authenticated"}`): `authenticated` leaves it off the public card, lists it on the extended card (`GetExtendedAgentCard`) and lets only signed-in callers run it; to anyone else `/deploy` is no command at all (it reaches the model as an unknown name does). It decides over what an MCP server\'s `visibility` says; a command named nowhere is `public` (docs/security.md).',
    ),
});
