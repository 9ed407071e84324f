/**
 * The Commands extension v1 for any `@a2a-js/sdk` 1.x server: a registry of commands, the parser,
 * the card entries (the Commands extension and the command-arguments extension), a request
 * handler that answers command messages and posts their replies through one small port, and
 * the building blocks it stands on (a delegating request handler, message claims, a call's
 * "client gone" signal). `mountCommandsOnSdk` mounts it on the SDK's own `DefaultRequestHandler`.
 */
export {
  COMMANDS_EXTENSION_URI,
  COMMAND_ARGUMENTS_EXTENSION_URI,
  COMMAND_KEY,
  COMMAND_NAME_PATTERN,
  REPLY_ERROR_KEY,
  TASK_REF_KEY,
  argumentValuesOf,
  commandReplyError,
  dataPart,
  isTerminal,
  splitCommandText,
  textPart,
  type ArgumentValue,
  type ArgumentValues,
} from './wire.js';
export {
  CommandUsageError,
  type CommandDefinition,
  type CommandHandler,
  type CommandInvocation,
  type CommandResult,
  type CommandVisibility,
} from './command.js';
export { CommandRegistry, CommandRegistrationError, type RegisteredCommand } from './registry.js';
export { helpCommand } from './help.js';
export { parseCommand, parseCommandText, type ParsedCommand } from './parse.js';
export {
  commandArgumentsExtension,
  commandArgumentsParams,
  commandsExtension,
  commandsExtensionParams,
  withCommandsExtension,
  type CardAudience,
} from './card.js';
export { buildReply, isCommandExchange } from './reply.js';
export { withoutCommandMetadata } from './metadata-guard.js';
export {
  CommandsRequestHandler,
  DEFAULT_ANSWER_HISTORY,
  type CommandsRequestHandlerOptions,
} from './request-handler.js';
export { CommandCalls, type CommandCallsOptions } from './command-calls.js';
export { CommandRunner, type CommandOutcome, type CommandRunnerOptions } from './runner.js';
export type { CommandTaskPort, DecidedReply, DecidedUpdate } from './port.js';
export { sdkTaskPort } from './sdk-port.js';
export { mountCommandsOnSdk, type SdkMountOptions } from './sdk-mount.js';
export { DelegatingRequestHandler } from './delegating-handler.js';
export { MessageClaims, contentDigest, type Claim, type FirstClaim, type RepeatClaim } from './message-claims.js';
export {
  InMemoryMessageClaimStore,
  type MessageClaimStore,
  type ClaimScope,
  type ClaimKey,
  type ClaimOutcome,
  type StoredClaim,
} from './message-claim-store.js';
export { CLIENT_GONE_KEY, clientGoneSignal, setClientGoneSignal, detachedOnClientGone } from './client-gone.js';
