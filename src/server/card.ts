import { SecurityScheme, type AgentCard, type SecurityRequirement } from '@a2a-js/sdk';

export interface CardOptions {
  /** The HTTP base URL clients reach, e.g. http://127.0.0.1:8080 (no trailing slash). */
  httpUrl: string;
  /** host:port of the gRPC server, when one runs. */
  grpcAddress?: string;
  version: string;
  /** Declare that the A2A endpoints need `Authorization: Bearer <token>`. */
  bearerAuth?: boolean;
}

/** The card's name for the bearer scheme (`securitySchemes.bearer`). */
export const BEARER_SCHEME = 'bearer';

function bearerScheme(): { securitySchemes: Record<string, SecurityScheme>; securityRequirements: SecurityRequirement[] } {
  return {
    securitySchemes: {
      [BEARER_SCHEME]: {
        scheme: {
          $case: 'httpAuthSecurityScheme',
          value: { scheme: 'Bearer', bearerFormat: '', description: 'A token the operator gave you, as "Authorization: Bearer <token>" (gRPC: authorization metadata).' },
        },
      },
    },
    securityRequirements: [{ schemes: { [BEARER_SCHEME]: { list: [] } } }],
  };
}

export const JSONRPC_PATH = '/a2a/jsonrpc';
export const REST_PATH = '/a2a/rest';

/**
 * The harness's agent card without its extensions (the commands wrapper adds its own entry
 * on every request). Every interface says protocol 1.0, or the SDK's clients refuse it.
 */
export function baseAgentCard(options: CardOptions): AgentCard {
  const interfaces = [
    { url: `${options.httpUrl}${JSONRPC_PATH}`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
    { url: `${options.httpUrl}${REST_PATH}`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' },
  ];
  if (options.grpcAddress) {
    interfaces.push({ url: options.grpcAddress, protocolBinding: 'GRPC', tenant: '', protocolVersion: '1.0' });
  }
  return {
    name: 'tiny-harness',
    description:
      'An agent harness: each conversation is an A2A task answered by a language model, streamed as it goes. Slash commands (/help, /model, /status) run on the harness instead of reaching the model.',
    supportedInterfaces: interfaces,
    provider: undefined,
    version: options.version,
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    ...(options.bearerAuth ? bearerScheme() : { securitySchemes: {}, securityRequirements: [] }),
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: [
      {
        id: 'chat',
        name: 'Chat',
        description: 'Answers messages with the task’s language model; /model chooses it.',
        tags: ['chat', 'llm'],
        examples: ['Explain what an A2A task is.', '/model', '/help'],
        inputModes: ['text/plain'],
        outputModes: ['text/plain'],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}

/**
 * The card as A2A 1.0 JSON for `/.well-known/agent-card.json`. The SDK's card handler sends
 * the card object as it is, which for the security schemes (a protobuf `oneof`) would be the
 * SDK's internal `{scheme: {$case, value}}`; they are written here in their JSON form,
 * `{"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}}`. (A security requirement's
 * internal shape, `{schemes: {bearer: {list: []}}}`, already is its JSON form.)
 */
export function cardJson(card: AgentCard): AgentCard {
  const schemes = Object.entries(card.securitySchemes ?? {});
  if (schemes.length === 0) return card;
  const securitySchemes = Object.fromEntries(schemes.map(([name, scheme]) => [name, SecurityScheme.toJSON(scheme)]));
  return { ...card, securitySchemes } as unknown as AgentCard;
}
