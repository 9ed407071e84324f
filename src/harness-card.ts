/**
 * The harness's card as it stands now: built on every request (CMD-16) from the configuration,
 * who may sign in, the tools a turn may call, and who answers (the model loop or a hosted agent).
 */
import type { AgentCard } from '@a2a-js/sdk';
import type { HarnessOptions } from './harness-options.js';
import type { Authenticator } from './server/authentication.js';
import { baseAgentCard, HOSTED_IDENTITY, type CardOptions } from './server/card.js';
import { VERSION } from './version.js';

/** The addresses the card names, filled in once the transports are bound. */
export type Endpoints = Pick<CardOptions, 'httpUrl' | 'grpcAddress'>;

export function cardBuilder(
  options: HarnessOptions,
  endpoints: Endpoints,
  authenticator: Authenticator | undefined,
  {
    tools,
    skills,
    agents,
  }: {
    tools: { configured: boolean };
    skills: { list(): readonly unknown[] };
    agents: { list(): readonly unknown[] };
  },
): () => AgentCard {
  const { config } = options;
  return () =>
    baseAgentCard({
      ...endpoints,
      publicUrl: options.publicUrl ?? config.publicUrl,
      publicGrpcAddress: config.publicGrpcAddress,
      version: VERSION,
      bearerAuth: authenticator?.fileUsers().length ? true : undefined,
      openIdConnect: config.auth.oidc && { issuer: config.auth.oidc.issuer, scopes: config.auth.oidc.requiredScopes },
      // Skills and agents alone are tools too: the model may call `skill` and `delegate`.
      toolCalls: tools.configured || skills.list().length > 0 || agents.list().length > 0,
      queueMaxPerTask: config.queue.maxPerTask,
      identity: options.agent ? (options.agentCard ?? HOSTED_IDENTITY) : undefined,
    });
}
