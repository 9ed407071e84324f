/** What an embedder (or `serve`) starts the harness with (`startHarness`, `harness.ts`). */
import type { AgentExecutor } from '@a2a-js/sdk/server';
import type { CommandRegistry } from './commands/index.js';
import type { HarnessConfig } from './config/schema.js';
import type { Logger } from './log.js';
import type { CardIdentity } from './server/card.js';

export interface HarnessOptions {
  config: HarnessConfig;
  dataDir: string;
  /** Store everything in this PostgreSQL database (shared with other instances) instead of SQLite in `dataDir`. May hold a password: never logged. */
  databaseUrl?: string;
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Serve gRPC on this port too (0 picks a free one); no gRPC when absent. */
  grpcPort?: number;
  log?: Logger;
  /** Where provider keys are read from (default: the process environment). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Registers the embedder's own commands, after the built-ins. */
  commands?: (registry: CommandRegistry) => void;
  /** The folder of command files (`*.md`, one command each), watched while serving. Default: `<dataDir>/commands`. */
  commandsDir?: string;
  /** The folder of skills (a subfolder with a `SKILL.md` each), watched while serving. Default: `<dataDir>/skills`. */
  skillsDir?: string;
  /** The folder of agent files (`*.md`, Claude Code's format), watched while serving. Default: `<dataDir>/agents`. */
  agentsDir?: string;
  /** The largest request body accepted (default "4mb"). */
  bodyLimit?: string;
  /**
   * Bearer-token authentication: when given, every A2A call needs a token of `tokens`
   * (token → user name) and sees only its user's tasks; the card and the page stay public.
   */
  auth?: { tokens: ReadonlyMap<string, string> };
  /**
   * An `AgentExecutor` of `@a2a-js/sdk` 1.x that runs every turn in the model loop's place, on
   * the same engine (docs/embedding.md); the commands that need a model are then not offered.
   */
  agent?: AgentExecutor;
  /** The hosted agent's name, description and skills on the card (`cardIdentity` reads a module's `card` export); default `HOSTED_IDENTITY`. */
  agentCard?: CardIdentity;
  /** Log the text of each message sent (debugging only; off by default). */
  logContent?: boolean;
  /** How often providers whose servers were down at start-up are asked again (default: a minute). */
  rediscoveryIntervalMs?: number;
  /** The base URL the card names for HTTP, when clients reach the harness through a proxy; over `config.publicUrl`. Checked by the caller (`publicUrlSchema`). */
  publicUrl?: string;
  /** The clock schedules read, in ms since the epoch (tests give a fake one); default `Date.now`. */
  now?: () => number;
}
