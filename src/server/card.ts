import {
  SecurityScheme,
  type AgentCard,
  type AgentExtension,
  type AgentSkill,
  type SecurityRequirement,
} from '@a2a-js/sdk';
import { z } from 'zod';
import {
  COMPACTED_NOTICE,
  COMPACTION_FAILED_NOTICE,
  COMPACTION_KEY,
  CONTEXT_CUT_NOTICE,
  CONVERSATION_EXTENSION_URI,
  GENERATION_KEY,
  REWIND_KEY,
  JSONRPC_PATH,
  REST_PATH,
  STREAM_RESUME_EXTENSION_URI,
  TOOL_CALLS_EXTENSION_URI,
  QUEUED_KEY,
  WHILE_BUSY_EXTENSION_URI,
  WHILE_BUSY_KEY,
  WHILE_BUSY_VALUES,
} from '../wire.js';
import { discoveryUrl } from './oidc.js';
import { SPOKEN_VERSIONS } from './protocol-version.js';
import { ELICITATION_EXTENSION_URI } from '../elicitations.js';

export interface CardOptions {
  /** The HTTP base URL the harness listens on, e.g. http://127.0.0.1:8080 (no trailing slash). */
  httpUrl: string;
  /** host:port of the gRPC server, when one runs. */
  grpcAddress?: string;
  /**
   * The HTTP base URL clients reach from outside (a reverse proxy, a load balancer), without a
   * trailing slash; it replaces `httpUrl` in the card. May hold a path: `https://example.com/agent`.
   */
  publicUrl?: string;
  /** host:port of the gRPC endpoint from outside; replaces `grpcAddress` in the card when gRPC runs. */
  publicGrpcAddress?: string;
  version: string;
  /** Declare that the A2A endpoints take `Authorization: Bearer <token>` with a token of the tokens file. */
  bearerAuth?: boolean;
  /** Declare that they take an OpenID Connect token of this issuer (`auth.oidc`), with the scopes every call needs. */
  openIdConnect?: { issuer: string; scopes?: string[] };
  /** Declare the tool-calls extension: tool servers are configured, so turns may call tools. */
  toolCalls?: boolean;
  /** The most messages a task's queue holds (`queue.maxPerTask`), declared with the while-busy extension; none: not declared. */
  queueMaxPerTask?: number;
  /** Who answers: the harness's model loop (none given), or a hosted agent's own name, description and skills. */
  identity?: CardIdentity;
}

/** What a hosted agent says of itself on the card (issue 37): the rest of the card is the engine's. */
export type CardIdentity = Pick<AgentCard, 'name' | 'description' | 'skills'>;

const skillSchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  description: z.string(),
  tags: z.array(z.string()).default([]),
  examples: z.array(z.string()).default([]),
  inputModes: z.array(z.string()).default([]),
  outputModes: z.array(z.string()).default([]),
});

/** A hosted agent's `card` export, as the SDK's samples write an AgentCard: the fields the engine does not fill itself. */
const identitySchema = z.object({
  name: z.string().min(1),
  description: z.string().min(1),
  skills: z.array(skillSchema).default([]),
});

/**
 * The identity an agent module exports as `card` (any other AgentCard fields it holds are the
 * engine's to fill, and ignored), or a problem naming the field. None exported: the hosted
 * agent's defaults, never the model loop's words.
 */
export function cardIdentity(exported: unknown): CardIdentity | { problem: string } {
  if (exported === undefined) return HOSTED_IDENTITY;
  const parsed = identitySchema.safeParse(exported);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { problem: `${issue.path.join('.') || 'card'}: ${issue.message}` };
  }
  const { name, description, skills } = parsed.data;
  return {
    name,
    description,
    skills: (skills.length ? skills : HOSTED_IDENTITY.skills).map((skill): AgentSkill => ({
      ...skill,
      securityRequirements: [],
    })),
  };
}

/** The card of an agent hosted without a `card` export: what is true of any agent on the engine. */
export const HOSTED_IDENTITY: CardIdentity = {
  name: 'tiny-harness agent',
  description:
    'An agent hosted on the tiny-harness engine: each conversation is a durable A2A task. Slash commands (/help, /status, /stop) run on the harness.',
  skills: [
    {
      id: 'agent',
      name: 'Agent',
      description: 'Answers messages.',
      tags: ['agent'],
      examples: [],
      inputModes: [],
      outputModes: [],
      securityRequirements: [],
    },
  ],
};

/** The model loop's own identity. */
const HARNESS_IDENTITY: CardIdentity = {
  name: 'tiny-harness',
  description:
    'An agent harness: each conversation is an A2A task answered by a language model, streamed as it goes. Slash commands (/help, /model, /status) run on the harness instead of reaching the model.',
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
};

/** The card entry of the tool-calls extension (spec/tool-calls-extension-v1.md). */
export function toolCallsExtension(): AgentExtension {
  return {
    uri: TOOL_CALLS_EXTENSION_URI,
    description:
      'Each tool call of a turn is a data part of a WORKING status update, {id, tool, server, input, status, output?}, a new update for each change of its status.',
    required: false,
    params: {},
  };
}

/** The card entry of the elicitation extension (spec/elicitation-extension-v1.md): a tool call's question to the user. */
export function elicitationExtension(): AgentExtension {
  return {
    uri: ELICITATION_EXTENSION_URI,
    description:
      'A tool call whose MCP server asks the user pauses the turn in INPUT_REQUIRED (AUTH_REQUIRED for a link), its status message holding {elicitationRequest: {id, mode, message, schema | url, ...}}; answer with a data part {elicitation: id, action: "accept" | "decline" | "cancel", content?}, or "done" for a link.',
    required: false,
    params: {},
  };
}

/** The stream-resume extension's entry (spec/stream-resume-extension-v1.md): every task's events carry their generation. */
export function streamResumeExtension(): AgentExtension {
  return {
    uri: STREAM_RESUME_EXTENSION_URI,
    description:
      'Every Task, status update and artifact update carries its generation in metadata["tiny-harness/generation"] and as its SSE id; SubscribeToTask with Last-Event-ID (gRPC metadata last-event-id) replays the events after it, then goes on live.',
    required: false,
    params: { metadataKey: GENERATION_KEY },
  };
}

/** The while-busy extension's entry (spec/while-busy-extension-v1.md): a message sent while a turn runs may be queued. */
export function whileBusyExtension(maxPerTask: number): AgentExtension {
  return {
    uri: WHILE_BUSY_EXTENSION_URI,
    description:
      'A message sent while a turn runs on its task is refused, queued behind it, queued first with the running turn stopped, or that and the stopped turn rewound, as its metadata["tiny-harness/while-busy"] says ("reject", the default, "enqueue", "interrupt" or "rollback"); a queued message\'s stream starts with the Task marked metadata["tiny-harness/queued"] = {messageId, position}, then its turn.',
    required: false,
    params: { metadataKey: WHILE_BUSY_KEY, values: [...WHILE_BUSY_VALUES], queuedKey: QUEUED_KEY, maxPerTask },
  };
}

/**
 * The conversation extension's entry (spec/conversation-extension-v1.md): how a compacted,
 * rewound or forked conversation looks on the wire. `commands` names the commands it defines;
 * which of them the agent offers is the Commands extension's entry's to say.
 */
export function conversationExtension(): AgentExtension {
  return {
    uri: CONVERSATION_EXTENSION_URI,
    description:
      'An agent message with metadata["tiny-harness/compaction"] is a summary standing for the conversation before it; one with metadata["tiny-harness/rewind"] = {to, hidden} hides the messages it names from GetTask, ListTasks and the model (the store keeps them); /fork copies the conversation into a new task.',
    required: false,
    params: {
      compactionKey: COMPACTION_KEY,
      rewindKey: REWIND_KEY,
      notices: [COMPACTED_NOTICE, COMPACTION_FAILED_NOTICE, CONTEXT_CUT_NOTICE],
      commands: ['compact', 'rewind', 'fork', 'context', 'memory'],
    },
  };
}

/** The card's name for the bearer scheme (`securitySchemes.bearer`). */
export const BEARER_SCHEME = 'bearer';

/** The card's name for the OpenID Connect scheme (`securitySchemes.oidc`). */
export const OIDC_SCHEME = 'oidc';

/**
 * The schemes in force and the requirements to match: either scheme is enough (one requirement
 * each, A2A's "or"); none when authentication is off.
 */
function securityOf(options: CardOptions): {
  securitySchemes: Record<string, SecurityScheme>;
  securityRequirements: SecurityRequirement[];
} {
  const securitySchemes: Record<string, SecurityScheme> = {};
  const securityRequirements: SecurityRequirement[] = [];
  if (options.openIdConnect) {
    securitySchemes[OIDC_SCHEME] = {
      scheme: {
        $case: 'openIdConnectSecurityScheme',
        value: {
          openIdConnectUrl: discoveryUrl(options.openIdConnect.issuer),
          description:
            'An ID or access token of this OpenID Connect provider, as "Authorization: Bearer <token>" (gRPC: authorization metadata).',
        },
      },
    };
    securityRequirements.push({ schemes: { [OIDC_SCHEME]: { list: options.openIdConnect.scopes ?? [] } } });
  }
  if (options.bearerAuth) {
    Object.assign(securitySchemes, bearerScheme());
    securityRequirements.push({ schemes: { [BEARER_SCHEME]: { list: [] } } });
  }
  return { securitySchemes, securityRequirements };
}

function bearerScheme(): Record<string, SecurityScheme> {
  return {
    [BEARER_SCHEME]: {
      scheme: {
        $case: 'httpAuthSecurityScheme',
        value: {
          scheme: 'Bearer',
          bearerFormat: '',
          description:
            'A token the operator gave you, as "Authorization: Bearer <token>" (gRPC: authorization metadata).',
        },
      },
    },
  };
}

/**
 * The harness's agent card, with the tool-calls extension when tools are configured (the
 * commands wrapper adds its own entries on every request). Each binding is listed once per
 * version spoken (`SPOKEN_VERSIONS`, which `protocol-version.ts` requires of every call), at the
 * same address, as A2A lets an agent (3.6.2): the 1.0 entries first, the ones the SDK's clients
 * pick and older readers take first; then the 1.1 ones (issue 36). The addresses are the public
 * ones when given: clients follow the card, and behind a proxy the address the harness listens
 * on is one they cannot reach.
 */
export function baseAgentCard(options: CardOptions): AgentCard {
  const httpUrl = options.publicUrl ?? options.httpUrl;
  const addresses: [binding: string, url: string][] = [
    ['JSONRPC', `${httpUrl}${JSONRPC_PATH}`],
    ['HTTP+JSON', `${httpUrl}${REST_PATH}`],
  ];
  // gRPC is listed only when it runs: a public address alone does not make it so.
  if (options.grpcAddress) addresses.push(['GRPC', options.publicGrpcAddress ?? options.grpcAddress]);
  const interfaces = SPOKEN_VERSIONS.flatMap((protocolVersion) =>
    addresses.map(([protocolBinding, url]) => ({ url, protocolBinding, tenant: '', protocolVersion })),
  );
  const { name, description, skills } = options.identity ?? HARNESS_IDENTITY;
  return {
    name,
    description,
    supportedInterfaces: interfaces,
    provider: undefined,
    version: options.version,
    capabilities: {
      streaming: true,
      pushNotifications: true,
      extensions: [
        streamResumeExtension(),
        conversationExtension(),
        ...(options.queueMaxPerTask ? [whileBusyExtension(options.queueMaxPerTask)] : []),
        ...(options.toolCalls ? [toolCallsExtension(), elicitationExtension()] : []),
      ],
      // GetExtendedAgentCard answers a signed-in caller (issue 38): only where callers sign in.
      // Offered whenever callers sign in: a signed-in caller may see more (issue 38).
      extendedAgentCard: options.bearerAuth === true || options.openIdConnect !== undefined,
    },
    ...securityOf(options),
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills,
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
