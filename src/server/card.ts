import type { AgentCard } from '@a2a-js/sdk';

export interface CardOptions {
  /** The HTTP base URL clients reach, e.g. http://127.0.0.1:8080 (no trailing slash). */
  httpUrl: string;
  /** host:port of the gRPC server, when one runs. */
  grpcAddress?: string;
  version: string;
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
    securitySchemes: {},
    securityRequirements: [],
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
