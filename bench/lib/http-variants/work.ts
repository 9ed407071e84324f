/**
 * The work behind the endpoints of bench/http-servers.ts, the same for every HTTP server: what
 * a request means and what it answers, so that only the plumbing (routing, the body, writing
 * JSON and SSE) differs between the variants in this folder.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

export const JSONRPC_PATH = '/a2a/jsonrpc';
export const REST_PATH = '/a2a/rest';
/** Events of a streamed turn. */
export const TURN_EVENTS = 20;

export const TASK = {
  id: '6f1c0b1e-2d2a-4c55-9a51-0c7a8e3f5b21',
  contextId: 'b3e4a6d0-8a44-4a7e-9d0e-5f2c1c9d7e10',
  status: {
    state: 'TASK_STATE_INPUT_REQUIRED',
    timestamp: '2026-12-06T12:00:00.000Z',
    message: {
      messageId: '0b8d3c52-1b8f-4f55-8a0e-3c2d1e4f5a60',
      role: 'ROLE_AGENT',
      parts: [{ text: 'State: input required\nMessages: 2\nModel: small' }],
    },
  },
  history: [],
  artifacts: [],
};

export const CARD = {
  name: 'bench',
  description: 'an agent card of about the size of the harness card',
  version: '0.1.0',
  supportedInterfaces: [
    { url: 'http://127.0.0.1/a2a/jsonrpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    { url: 'http://127.0.0.1/a2a/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
  ],
  capabilities: { streaming: true, pushNotifications: true },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'chat', name: 'chat', description: 'talks', tags: ['chat'] }],
};
export const PAGE = '<!doctype html><html><head><title>bench</title></head><body><main></main></body></html>';
export const METRICS = '# TYPE requests_total counter\nrequests_total 1\n';
export const PAGE_HEADERS = { 'Content-Security-Policy': "default-src 'self'", 'Cache-Control': 'no-cache' };

export type JsonRpcId = string | number | null;

/** A JSON-RPC answer: a plain JSON body, or the events of a stream. */
export type Answer = { json: unknown } | { events: AsyncIterable<{ id: string; data: string }> };

function rpcError(id: JsonRpcId, code: number, message: string): { json: unknown } {
  return { json: { jsonrpc: '2.0', id, error: { code, message } } };
}

/** A parsed body (or undefined when it did not parse) as a JSON-RPC 2.0 request, answered. */
export function answerJsonRpc(body: unknown): Answer {
  if (body === undefined) return rpcError(null, -32700, 'Parse error');
  const request = body as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
  const id = request?.id;
  const idOk = id === undefined || id === null || typeof id === 'string' || typeof id === 'number';
  if (
    typeof request !== 'object' ||
    request === null ||
    request.jsonrpc !== '2.0' ||
    typeof request.method !== 'string' ||
    !idOk ||
    (request.params !== undefined && (typeof request.params !== 'object' || request.params === null))
  )
    return rpcError(idOk ? ((id as JsonRpcId) ?? null) : null, -32600, 'Invalid Request');
  const rpcId = (id as JsonRpcId) ?? null;
  if (request.method === 'GetTask') return { json: { jsonrpc: '2.0', id: rpcId, result: TASK } };
  if (request.method === 'SendStreamingMessage')
    return { events: turnEvents((result) => ({ jsonrpc: '2.0', id: rpcId, result })) };
  return rpcError(rpcId, -32601, 'Method not found');
}

/** HTTP+JSON `POST /message:stream`: a body with a message starts a turn. */
export function restStream(body: unknown): Answer | undefined {
  const message = (body as { message?: unknown } | undefined)?.message;
  if (typeof message !== 'object' || message === null) return undefined;
  return { events: turnEvents((result) => result) };
}

/** A streamed turn: status updates arriving one per turn of the event loop, as a model's tokens would. */
async function* turnEvents(wrap: (result: unknown) => unknown): AsyncGenerator<{ id: string; data: string }> {
  for (let i = 1; i <= TURN_EVENTS; i++) {
    if (i > 1) await nextTurn();
    const update = {
      statusUpdate: {
        taskId: TASK.id,
        contextId: TASK.contextId,
        status: { state: i === TURN_EVENTS ? 'TASK_STATE_COMPLETED' : 'TASK_STATE_WORKING' },
        metadata: { token: `token ${i} `, final: i === TURN_EVENTS },
      },
    };
    yield { id: `${TASK.id}:${i}`, data: JSON.stringify(wrap(update)) };
  }
}

/** One SSE frame, as the servers without an SSE helper write it (the same bytes as Hono's `writeSSE`). */
export function sseFrame(event: { id: string; data: string }): string {
  return `data: ${event.data}\nid: ${event.id}\n\n`;
}
