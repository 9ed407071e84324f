/**
 * Reaching an A2A agent from the command line: the SDK's own client over JSON-RPC, HTTP+JSON or
 * gRPC (the card decides), the user's `--header`s on every request (the card's included), the
 * Commands extension activated with the `A2A-Extensions` header, and every failure turned into
 * one line a person can act on.
 */
import { randomUUID } from 'node:crypto';
import { Role, type AgentCard, type Message, type Part } from '@a2a-js/sdk';
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  type CallInterceptor,
  type Client,
} from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import { A2AError } from '@a2a-js/sdk/errors';
import {
  checkCardSignature,
  describeCardSignature,
  loadCardKeys,
  type CardKeys,
} from '@tiny-harness/conform/card-signature';
import { argumentValuesOf, COMMANDS_EXTENSION_URI, textPart, type ArgumentValue } from '../wire.js';
import { tokenAuth, type TokenAuth, type TokenSource } from './token-source.js';

/** A request header given on the command line, `Name: value`. */
export type Header = readonly [name: string, value: string];

/** One command as the card lists it under the Commands extension. */
export interface CardCommand {
  name: string;
  description: string;
  argumentHint: string;
  /** The values each argument can take, by position (the command-arguments extension); none when not listed. */
  argumentValues?: ArgumentValue[][];
}

export interface Connection {
  /** The agent's base URL as the user gave it, without a trailing slash. */
  url: string;
  client: Client;
  /** The card as last read ({@link refreshCard} reads it again). */
  card: AgentCard;
  /** The card's commands, in its order; empty when the agent does not offer the extension. */
  commands: CardCommand[];
  /** Reads the card again; `undefined` when it has not changed since the last read (HTTP 304). */
  readCard: () => Promise<AgentCard | undefined>;
  /** The user's headers, as every request sends them (for the calls the SDK's client cannot make). */
  headers: Record<string, string>;
  /** The keys every card read must be signed with (`--card-key`); none: cards are taken unchecked. */
  cardKeys?: CardKeys;
}

/** A card whose signature does not verify with the keys the user gave (`--card-key`); the message says why. */
export class CardRefused extends Error {}

const CARD_TIMEOUT_MS = 15000;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Reads `Name: value`; returns a sentence saying what is wrong when it is not a header. */
export function parseHeader(text: string): Header | string {
  const colon = text.indexOf(':');
  const name = colon === -1 ? '' : text.slice(0, colon).trim();
  const value = colon === -1 ? '' : text.slice(colon + 1).trim();
  if (!TOKEN.test(name)) return `--header must look like "Name: value", not "${text}".`;
  if (/[\r\n\0]/.test(value)) return `--header ${name} has a line break in its value.`;
  return [name, value];
}

/** The agent's base URL without trailing slashes; a sentence saying what is wrong when it is not one. */
export function agentBaseUrl(text: string): { url: string } | { problem: string } {
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    return { problem: `"${text}" is not a URL; give the agent's base URL, e.g. http://127.0.0.1:8080.` };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return { problem: `"${text}" is not an http(s) URL.` };
  return { url: text.replace(/\/+$/, '') };
}

/**
 * The headers every request carries: the user's, plus the Commands extension in
 * `A2A-Extensions` (added to any extensions the user named there).
 */
export function requestHeaders(headers: readonly Header[]): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of headers) {
    const existing = Object.keys(result).find((key) => key.toLowerCase() === name.toLowerCase());
    if (existing !== undefined) result[existing] = `${result[existing]}, ${value}`;
    else result[name] = value;
  }
  const extensionsKey = Object.keys(result).find((key) => key.toLowerCase() === 'a2a-extensions') ?? 'A2A-Extensions';
  const named = (result[extensionsKey] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!named.includes(COMMANDS_EXTENSION_URI)) named.push(COMMANDS_EXTENSION_URI);
  result[extensionsKey] = named.join(', ');
  return result;
}

/** Sends `headers` (as they stand at each call: a renewed token included) with every call of the SDK's client. */
export function headerInterceptor(headers: Record<string, string>, auth?: TokenAuth): CallInterceptor {
  return {
    async before(args) {
      await auth?.beforeCall();
      args.options = { ...args.options, serviceParameters: { ...args.options?.serviceParameters, ...headers } };
    },
    async after() {},
  };
}

/** Thrown by the card's fetch on a 304, so that the resolver reads no body. */
class CardUnchanged extends Error {}

/**
 * A reader of the agent's card with the user's headers, sending the last read's ETag in
 * `If-None-Match`: a card that has not changed costs a 304 and no body.
 */
function cardReader(
  url: string,
  sent: Record<string, string>,
  fetchImpl: typeof fetch = fetch,
): () => Promise<AgentCard | undefined> {
  let etag: string | undefined;
  const cardFetch: typeof fetch = async (input, init) => {
    const merged = new Headers(init?.headers);
    for (const [name, value] of Object.entries(sent)) merged.set(name, value);
    if (etag) merged.set('If-None-Match', etag);
    const response = await fetchImpl(input, {
      ...init,
      headers: merged,
      signal: init?.signal ?? AbortSignal.timeout(CARD_TIMEOUT_MS),
    });
    if (response.status === 304) throw new CardUnchanged();
    if (response.ok) etag = response.headers.get('etag') ?? undefined;
    return response;
  };
  const resolver = new DefaultAgentCardResolver({ fetchImpl: cardFetch });
  return async () => {
    try {
      return await resolver.resolve(`${url}/`);
    } catch (error) {
      if (error instanceof CardUnchanged) return undefined;
      throw error;
    }
  };
}

/**
 * Reads the card (with the user's headers) and builds a client on the transport it prefers. With
 * `tokens`, every request carries its token, renewed when the agent refuses it (`token-source.ts`).
 * With `cardKey` (`--card-key`: a JWKS URL or a key file), a card whose signature does not verify
 * with those keys is refused ({@link CardRefused}): the client never trusts a key the card names.
 */
export async function connect(
  url: string,
  headers: readonly Header[],
  { tokens, cardKey }: { tokens?: TokenSource; cardKey?: string } = {},
): Promise<Connection> {
  const sent = requestHeaders(headers);
  const cardKeys = cardKey === undefined ? undefined : await loadCardKeys(cardKey);
  const auth = tokens && (await tokenAuth(sent, tokens));
  const fetchImpl = auth?.fetch;
  const readCard = cardReader(url, sent, fetchImpl);
  const card = (await readCard())!;
  if (cardKeys) await requireSigned(card, cardKeys);
  const factory = new ClientFactory({
    transports: [
      new JsonRpcTransportFactory({ fetchImpl }),
      new RestTransportFactory({ fetchImpl }),
      new GrpcTransportFactory(auth && { grpcCallOptions: { interceptors: [auth.grpcInterceptor] } }),
    ],
    clientConfig: { interceptors: [headerInterceptor(sent, auth)] },
  });
  const client = await factory.createFromAgentCard(card);
  return { url, client, card, commands: cardCommands(card), readCard, headers: sent, ...(cardKeys && { cardKeys }) };
}

/** Throws {@link CardRefused} unless `card`'s signature verifies with `keys`. */
async function requireSigned(card: AgentCard, keys: CardKeys): Promise<void> {
  const check = await checkCardSignature(card, keys);
  if (!check.valid) throw new CardRefused(`refused the agent card: ${describeCardSignature(check)}`);
}

/**
 * Reads the card again and takes its commands when it changed (a command file added since, say);
 * true when it did. The client stays as it is: its transport was chosen once. A card that cannot
 * be read now, or whose signature does not verify (`--card-key`), leaves the one read before.
 */
export async function refreshCard(connection: Connection): Promise<boolean> {
  try {
    const card = await connection.readCard();
    if (!card) return false;
    if (connection.cardKeys) await requireSigned(card, connection.cardKeys);
    connection.card = card;
    connection.commands = cardCommands(card);
    return true;
  } catch {
    // The agent may be restarting: the next read tries again.
    return false;
  }
}

/** The commands a card lists under the extension; none when it has no such entry or a malformed one. */
export function cardCommands(card: AgentCard): CardCommand[] {
  const entry = card.capabilities?.extensions?.find((extension) => extension.uri === COMMANDS_EXTENSION_URI);
  const listed: unknown = entry?.params?.commands;
  if (!Array.isArray(listed)) return [];
  const values = argumentValuesOf(card.capabilities?.extensions);
  return listed
    .filter(
      (c): c is Record<string, unknown> =>
        typeof c === 'object' && c !== null && typeof (c as { name?: unknown }).name === 'string',
    )
    .map((c) => ({
      name: String(c.name),
      description: typeof c.description === 'string' ? c.description : '',
      argumentHint: typeof c.argument_hint === 'string' ? c.argument_hint : '',
      ...(values.has(String(c.name)) ? { argumentValues: values.get(String(c.name)) } : {}),
    }));
}

/** A user message of one text part, on a task and context when given. */
/** `parts`: what the message holds instead of the text (an answer's data part, issue 39). */
export function userMessage(text: string, ids: { taskId?: string; contextId?: string; parts?: Part[] } = {}): Message {
  return {
    messageId: randomUUID(),
    taskId: ids.taskId ?? '',
    contextId: ids.contextId ?? '',
    role: Role.ROLE_USER,
    parts: ids.parts ?? [textPart(text)],
    metadata: {},
    extensions: [],
    referenceTaskIds: [],
  };
}

/** Error codes found on an error or its causes (fetch wraps the socket's error; gRPC has numbers). */
function codesOf(error: unknown): Array<string | number> {
  const codes: Array<string | number> = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth++) {
    const { code, errors, cause } = current as { code?: unknown; errors?: unknown; cause?: unknown };
    if (typeof code === 'string' || typeof code === 'number') codes.push(code);
    if (Array.isArray(errors)) codes.push(...errors.flatMap((e) => codesOf(e)));
    current = cause;
  }
  return codes;
}

function oneLine(text: string): string {
  const line =
    text
      .split('\n')
      .map((s) => s.trim())
      .find(Boolean) ?? 'unknown error';
  return line.length > 300 ? `${line.slice(0, 299)}…` : line;
}

/** One line saying what failed, never a stack trace: `cannot reach URL (connection refused)`. */
export function describeClientError(error: unknown, url: string): string {
  const codes = codesOf(error);
  const message = error instanceof Error ? error.message : String(error);
  const has = (...wanted: Array<string | number>) => wanted.some((w) => codes.includes(w));
  if (has('ECONNREFUSED')) return `cannot reach ${url} (connection refused)`;
  if (has('ENOTFOUND', 'EAI_AGAIN')) return `cannot reach ${url} (host not found)`;
  if (has('ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT') || (error instanceof Error && error.name === 'TimeoutError'))
    return `cannot reach ${url} (timed out)`;
  if (has('ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE') || message === 'terminated') return `lost the connection to ${url}`;
  if (
    has(
      'CERT_HAS_EXPIRED',
      'DEPTH_ZERO_SELF_SIGNED_CERT',
      'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      'ERR_TLS_CERT_ALTNAME_INVALID',
    )
  )
    return `cannot reach ${url} (TLS: ${oneLine(message)})`;
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : '';
  if (cause === 'bad port') return `cannot reach ${url} (fetch refuses that port; choose another)`;
  if (message === 'fetch failed') return `cannot reach ${url}${cause ? ` (${oneLine(cause)})` : ''}`;
  const card = /Failed to fetch Agent Card from (\S+): (\d+)/.exec(message);
  if (card) return `no agent card at ${card[1]} (HTTP ${card[2]})`;
  if (error instanceof SyntaxError) return `${url} did not answer with A2A JSON (${oneLine(message)})`;
  if (error instanceof A2AError) return `the agent refused the request: ${oneLine(message)}`;
  // gRPC status 14 (UNAVAILABLE): the gRPC address on the card does not answer.
  if (has(14) && /UNAVAILABLE/.test(message)) return `cannot reach the agent's gRPC address (${oneLine(message)})`;
  return oneLine(message);
}
