/**
 * Whether the agent takes this client's calls, checked before the chat says it is connected:
 * an agent's card is public, so reading it says nothing of the token its calls need. The check
 * is a call that costs the agent nothing, GetTask of an id no task has, which every A2A agent
 * answers: "not found" when the call was let in.
 */
import { randomUUID } from 'node:crypto';
import type { AgentCard } from '@a2a-js/sdk';
import { A2AError, TaskNotFoundError } from '@a2a-js/sdk/errors';
import type { Connection, Header } from './connect.js';

/**
 * Undefined when the agent takes the calls (or its card asks for no credentials, so a refusal
 * is not about them); else one sentence saying what is missing and how to pass it. A failure to
 * reach the agent is thrown.
 */
export async function accessProblem(
  connection: Connection,
  headers: readonly Header[],
  tokenGiven = false,
): Promise<string | undefined> {
  try {
    await connection.client.getTask({ tenant: '', id: randomUUID(), historyLength: 0 });
    return undefined;
  } catch (error) {
    if (error instanceof TaskNotFoundError) return undefined;
    if (!(error instanceof A2AError)) throw error;
    const asked = credentialHeader(connection.card);
    if (!asked) return undefined;
    const given = headers.find(([name]) => name.toLowerCase() === asked.name.toLowerCase());
    const agent = `the agent at ${connection.url}`;
    if (tokenGiven && asked.name === 'Authorization') return `${agent} refused the token (${firstLine(error.message)})`;
    if (!given) {
      const bearer = asked.value.startsWith('Bearer') ? ' or --token, --token-command, TINY_HARNESS_TOKEN' : '';
      return `${agent} needs a token: pass it with --header "${asked.name}: ${asked.value}"${bearer}`;
    }
    return `${agent} refused the token given with --header ${given[0]} (${firstLine(error.message)})`;
  }
}

/** The header the card's first security requirement is met with, as a user would write it; undefined when it asks for none. */
function credentialHeader(card: AgentCard): { name: string; value: string } | undefined {
  const required = card.securityRequirements?.flatMap((requirement) => Object.keys(requirement.schemes)) ?? [];
  if (required.length === 0) return undefined;
  const scheme = card.securitySchemes?.[required[0]!]?.scheme;
  if (scheme?.$case === 'apiKeySecurityScheme' && scheme.value.location === 'header')
    return { name: scheme.value.name, value: '<key>' };
  if (scheme?.$case === 'httpAuthSecurityScheme' && scheme.value.scheme.toLowerCase() === 'basic')
    return { name: 'Authorization', value: 'Basic <credentials>' };
  return { name: 'Authorization', value: 'Bearer <token>' };
}

function firstLine(text: string): string {
  const line = text.split('\n')[0]!.trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}
