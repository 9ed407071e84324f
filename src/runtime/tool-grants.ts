import type { ContextKey } from './task-state.js';

/** A tool one user allowed for good in one conversation with `/approve always` (TOOL-5). */
export interface ToolGrant {
  tool: string;
  /** When it was allowed, ISO 8601. */
  grantedAt: string;
}

/**
 * The tools each user allowed in each conversation (context): their calls there run without
 * asking, on any instance, after any restart, until revoked with `/permissions revoke` (TOOL-5).
 * Contexts are named by clients, so grants are kept per user (`ContextKey`).
 */
export interface ToolGrants {
  /** Allows the tools in the context; allowing one again changes nothing. */
  grant(context: ContextKey, tools: readonly string[]): Promise<void>;
  /** The tools allowed in the context, by name. */
  list(context: ContextKey): Promise<ToolGrant[]>;
  /** Takes a tool's grant back: false when it had none. */
  revoke(context: ContextKey, tool: string): Promise<boolean>;
}
