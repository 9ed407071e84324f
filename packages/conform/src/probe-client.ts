/**
 * The kit's view of the server under test: the card as served (raw JSON, as a client would
 * read it), and an SDK client per transport that sends the user's headers, activates the
 * Commands extension, and records the `A2A-Extensions` header of every answer (HTTP headers,
 * or gRPC response metadata), so that CMD-17 can be checked on each call.
 */
import { AgentCard, Role, type Message, type Part } from '@a2a-js/sdk';
import {
  ClientFactory,
  JsonRpcTransportFactory,
  RestTransportFactory,
  type CallInterceptor,
  type Client,
  type TransportFactory,
} from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import { InterceptingCall, status as GrpcStatus, type Interceptor } from '@grpc/grpc-js';
import { randomUUID } from 'node:crypto';

export const COMMANDS_URI = 'https://madarauchiha-314.github.io/tiny-harness/a2a/ext/commands/v1';

/** The transports as the card names them (`protocolBinding`). */
export const TRANSPORT_NAMES = ['JSONRPC', 'HTTP+JSON', 'GRPC'] as const;
/** A transport as a card names it. */
export type TransportName = (typeof TRANSPORT_NAMES)[number];

const CARD_PATH = '.well-known/agent-card.json';
const TIMEOUT_MS = 15_000;

/** The server refused the kit's credentials: it wants a token. */
export class AuthenticationRequired extends Error {
  constructor() {
    super("authentication required: pass --header 'Authorization: Bearer ...'");
  }
}

/** The server answered, but not with a card. */
export class CardUnreadable extends Error {}

/** Why `url` could not be reached, in words: what the network said, never a stack. */
export function unreachable(url: string, error: unknown): string {
  const codes = new Set<unknown>();
  for (let current = error, depth = 0; current instanceof Object && depth < 5; depth++) {
    const { code, errors, cause } = current as { code?: unknown; errors?: unknown; cause?: unknown };
    codes.add(code);
    if (Array.isArray(errors)) for (const inner of errors) codes.add((inner as { code?: unknown })?.code);
    current = cause;
  }
  const has = (...wanted: string[]) => wanted.some((code) => codes.has(code));
  const why = has('ECONNREFUSED')
    ? 'connection refused'
    : has('ENOTFOUND', 'EAI_AGAIN')
      ? 'host not found'
      : has('ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT') ||
          (error instanceof Error && error.name === 'TimeoutError')
        ? 'timed out'
        : has('ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE')
          ? 'the connection was lost'
          : error instanceof Error && error.cause instanceof Error
            ? error.cause.message
            : error instanceof Error
              ? error.message
              : String(error);
  return `cannot reach ${url} (${why.split('\n')[0]!.slice(0, 200)})`;
}

/** The `A2A-Extensions` header values the last answers carried, newest last. */
export class HeaderTap {
  private seen: string[] = [];
  /** Whether an answer refused the credentials: HTTP 401 or 403, gRPC UNAUTHENTICATED or PERMISSION_DENIED. */
  authRefused = false;

  record(value: string | null | undefined): void {
    this.seen.push(value ?? '');
  }

  /** Forgets what was seen: the next call's headers are read alone. */
  reset(): void {
    this.seen = [];
  }

  /** Whether every answer since the last reset echoed `uri` (and there was at least one). */
  allEcho(uri: string): boolean {
    return (
      this.seen.length > 0 &&
      this.seen.every((value) =>
        value
          .split(',')
          .map((s) => s.trim())
          .includes(uri),
      )
    );
  }

  get values(): readonly string[] {
    return this.seen;
  }
}

export interface CardRead {
  /** The card as JSON, exactly as served. */
  raw: Record<string, unknown>;
  card: AgentCard;
}

/** Reads the card at `<url>/.well-known/agent-card.json`, with the user's headers. */
export async function readCard(url: string, headers: Record<string, string>): Promise<CardRead> {
  const response = await fetch(new URL(CARD_PATH, url.endsWith('/') ? url : `${url}/`), {
    headers,
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  if (response.status === 401 || response.status === 403) throw new AuthenticationRequired();
  if (!response.ok) throw new CardUnreadable(`it answered HTTP ${response.status}`);
  const raw = (await response.json().catch(() => {
    throw new CardUnreadable('it is not JSON');
  })) as Record<string, unknown>;
  return { raw, card: AgentCard.fromJSON(raw) };
}

/** The transports the card declares, in its order. */
export function declaredTransports(card: AgentCard): TransportName[] {
  const names = (card.supportedInterfaces ?? []).map((entry) => entry.protocolBinding.toUpperCase());
  return TRANSPORT_NAMES.filter((name) => names.includes(name));
}

/**
 * A client on one transport. `activate`: send `A2A-Extensions: <Commands v1>` (as well as the
 * user's headers); without it, the calls go as from a client that does not know the extension.
 */
export async function clientFor(
  card: AgentCard,
  transport: TransportName,
  headers: Record<string, string>,
  tap: HeaderTap,
  activate = true,
): Promise<Client> {
  const sent: Record<string, string> = { ...headers };
  if (activate) {
    const key = Object.keys(sent).find((name) => name.toLowerCase() === 'a2a-extensions');
    if (key) sent[key] = `${sent[key]}, ${COMMANDS_URI}`;
    else sent['A2A-Extensions'] = COMMANDS_URI;
  }
  const tappingFetch: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    tap.record(response.headers.get('a2a-extensions'));
    if (response.status === 401 || response.status === 403) tap.authRefused = true;
    return response;
  };
  const tappingInterceptor: Interceptor = (options, nextCall) =>
    new InterceptingCall(nextCall(options), {
      start(metadata, listener, next) {
        next(metadata, {
          onReceiveMetadata(received, nextMetadata) {
            tap.record(received.get('a2a-extensions').map(String).join(', '));
            nextMetadata(received);
          },
          onReceiveStatus(status, nextStatus) {
            if (status.code === GrpcStatus.UNAUTHENTICATED || status.code === GrpcStatus.PERMISSION_DENIED)
              tap.authRefused = true;
            nextStatus(status);
          },
        });
      },
    });
  const factories: Record<TransportName, () => TransportFactory> = {
    JSONRPC: () => new JsonRpcTransportFactory({ fetchImpl: tappingFetch }),
    'HTTP+JSON': () => new RestTransportFactory({ fetchImpl: tappingFetch }),
    GRPC: () => new GrpcTransportFactory({ grpcCallOptions: { interceptors: [tappingInterceptor] } }),
  };
  const withHeaders: CallInterceptor = {
    async before(args) {
      args.options = { ...args.options, serviceParameters: { ...args.options?.serviceParameters, ...sent } };
    },
    async after() {},
  };
  const factory = new ClientFactory({
    transports: [factories[transport]()],
    preferredTransports: [transport],
    clientConfig: { interceptors: [withHeaders] },
  });
  return factory.createFromAgentCard(card);
}

export function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: {} };
}

/** A user message; `parts` defaults to one text part holding `text`. */
export function userMessage(
  text: string,
  ids: { taskId?: string; contextId?: string; messageId?: string } = {},
  parts?: Part[],
): Message {
  return {
    messageId: ids.messageId ?? randomUUID(),
    taskId: ids.taskId ?? '',
    contextId: ids.contextId ?? '',
    role: Role.ROLE_USER,
    parts: parts ?? [textPart(text)],
    metadata: {},
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The text of a message's text parts. */
export function textOf(message: Message | undefined): string {
  return (message?.parts ?? []).map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');
}
