/**
 * Clients of the benchmarks: the SDK's JSON-RPC client (what an A2A client uses), and a raw
 * `node:http` SSE client that timestamps every event as it arrives, for streams where the
 * client's own parsing must not blur the figure. Both reach only 127.0.0.1.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import type { Message, SendMessageRequest, Task } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { userMessage } from './seed.js';

export interface Target {
  id: string;
  contextId: string;
}

export async function sdkClient(url: string, fetchImpl?: typeof fetch): Promise<Client> {
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    preferredTransports: ['JSONRPC'],
  });
  return factory.createFromUrl(`${url}/`);
}

/** Blocking `SendMessage` of a text, on `target` or a new task; the task or message it answers. */
export async function sendText(
  client: Client,
  body: string,
  target?: Target,
  historyLength?: number,
): Promise<Task | Message> {
  const request: SendMessageRequest = {
    tenant: '',
    message: userMessage(body, target),
    configuration:
      historyLength === undefined
        ? undefined
        : { acceptedOutputModes: [], taskPushNotificationConfig: undefined, historyLength, returnImmediately: false },
    metadata: {},
  };
  return client.sendMessage(request);
}

export function isTask(result: Task | Message): result is Task {
  return 'status' in result;
}

/** A keep-alive agent without a socket limit: 1,000 streams need 1,000 connections. */
export const keepAlive = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 4096 });

export interface SseEvent {
  /** performance.now() when the chunk holding the event's end arrived. */
  at: number;
  data: string;
}

export interface SseResult {
  status: number;
  /** performance.now() just before the request was written. */
  start: number;
  /** performance.now() when the response ended. */
  end: number;
  events: SseEvent[];
}

/**
 * POSTs `body` as JSON and reads the `text/event-stream` answer, calling `onEvent` with each
 * event's `data` as it arrives (and keeping them in `events` unless `keep` is false). With
 * `idleTimeoutMs`, a stream silent that long fails instead of hanging the benchmark; with
 * `signal`, the caller can end it (the request is destroyed and the promise rejects).
 */
export function postSse(
  url: string,
  body: unknown,
  options: {
    headers?: Record<string, string>;
    onEvent?: (event: SseEvent) => void;
    keep?: boolean;
    idleTimeoutMs?: number;
    signal?: AbortSignal;
  } = {},
): Promise<SseResult> {
  const payload = JSON.stringify(body);
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const events: SseEvent[] = [];
    const request = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: 'POST',
        agent: keepAlive,
        signal: options.signal,
        headers: {
          'content-type': 'application/json',
          accept: 'text/event-stream',
          'content-length': Buffer.byteLength(payload),
          ...options.headers,
        },
      },
      (response) => {
        response.setEncoding('utf8');
        let buffer = '';
        response.on('data', (chunk: string) => {
          const at = performance.now();
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const raw = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const data = raw
              .split('\n')
              .filter((line) => line.startsWith('data:'))
              .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
              .join('\n');
            if (!data) continue;
            const event = { at, data };
            if (options.keep !== false) events.push(event);
            options.onEvent?.(event);
          }
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, start, end: performance.now(), events }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    if (options.idleTimeoutMs)
      request.setTimeout(options.idleTimeoutMs, () =>
        request.destroy(new Error(`no data for ${options.idleTimeoutMs} ms`)),
      );
    const start = performance.now();
    request.end(payload);
  });
}

/** A `SendStreamingMessage` JSON-RPC request body, as the SDK's client writes it. */
export function streamingRequest(text: string, target?: Target, historyLength?: number): unknown {
  return {
    jsonrpc: '2.0',
    id: randomUUID(),
    method: 'SendStreamingMessage',
    params: {
      message: {
        messageId: randomUUID(),
        role: 'ROLE_USER',
        parts: [{ text, mediaType: 'text/plain' }],
        ...(target ? { taskId: target.id, contextId: target.contextId } : {}),
        metadata: {},
      },
      configuration: historyLength === undefined ? {} : { historyLength },
      metadata: {},
    },
  };
}

export const A2A_HEADERS = { 'A2A-Version': '1.0' };

/** One event of an A2A JSON-RPC stream, as JSON. */
export interface StreamResult {
  task?: { id: string; contextId: string; status?: { state: string } };
  statusUpdate?: { taskId: string; status?: { state: string; message?: { parts?: Array<{ text?: string }> } } };
  artifactUpdate?: {
    taskId: string;
    append?: boolean;
    lastChunk?: boolean;
    artifact: { artifactId: string; parts?: Array<{ text?: string }> };
  };
  message?: unknown;
}

export function parseStreamEvent(data: string): StreamResult {
  const parsed = JSON.parse(data) as { result?: StreamResult; error?: { message?: string } };
  if (parsed.error) throw new Error(`stream error: ${parsed.error.message}`);
  return parsed.result ?? {};
}

export function partsText(parts: Array<{ text?: string }> | undefined): string {
  return (parts ?? []).map((p) => p.text ?? '').join('');
}
