/**
 * tiny-harness as a library: start the harness in your own process, register your own
 * commands, or take the Commands extension alone for another @a2a-js/sdk server, with the
 * building blocks it stands on (message claims, the "client gone" signal; its handler wrapping,
 * `DelegatingRequestHandler`, is the package's own: `@tiny-harness/commands-extension`).
 */
export { startHarness, type HarnessOptions, type RunningHarness } from './harness.js';
export { loadConfig, parseConfig } from './config/load.js';
export { configSchema, defaultConfig, type HarnessConfig, type HarnessConfigInput } from './config/schema.js';
export { HarnessError, type HarnessErrorCode } from './errors.js';
export { createLogger, silentLogger, type Logger } from './log.js';
export { TokenAuthenticator, AuthenticatedUser } from './server/auth.js';
export { loadTokens, parseTokenEnv, parseTokenFile, TOKENS_ENV, type TokenTable } from './server/auth-tokens.js';
export * from './a2a/index.js';
export * from './commands/index.js';
export {
  CommandFolder,
  loadCommandFiles,
  expandTemplate,
  type CommandFolderOptions,
  type FileCommand,
} from './file-commands/index.js';
