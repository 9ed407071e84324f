/**
 * The Commands extension v1 for any @a2a-js/sdk server: a registry, a request handler that
 * answers command messages, the card entry, and the built-in commands. It knows the SDK and
 * the generic building blocks of ../a2a/, nothing of the harness around it.
 */
export { COMMANDS_EXTENSION_URI, COMMAND_KEY, TASK_REF_KEY, isTerminal } from '../wire.js';
export {
  CommandUsageError,
  type CommandDefinition,
  type CommandHandler,
  type CommandInvocation,
  type CommandResult,
} from './command.js';
export { CommandRegistry, CommandRegistrationError, type RegisteredCommand } from './registry.js';
export { parseCommand, parseCommandText, type ParsedCommand } from './parse.js';
export {
  commandArgumentsExtension,
  commandArgumentsParams,
  commandsExtension,
  commandsExtensionParams,
  withCommandsExtension,
} from './card.js';
export { buildReply, isCommandExchange } from './reply.js';
export { withoutCommandMetadata } from './metadata-guard.js';
export {
  CommandsRequestHandler,
  DEFAULT_ANSWER_HISTORY,
  type CommandsRequestHandlerOptions,
} from './request-handler.js';
export type { CommandOutcome } from './runner.js';
export type { CommandTaskPort, DecidedUpdate } from './port.js';
export { sdkTaskPort } from './sdk-port.js';
export {
  registerBuiltinCommands,
  type ToolApprovalControl,
  type TurnControl,
  type ModelControl,
  type SubtaskControl,
  type TaskReporter,
  type TaskReport,
  type ModelChoice,
  type UsageLine,
} from './builtins/index.js';
