/**
 * A `fetch` for the SDK's JSON-RPC and HTTP+JSON client transports (and its card resolver,
 * and a test's own `fetch` calls) that checks every answer on the wire, before it is decoded: the raw JSON of each
 * response, and each Server-Sent Event of a stream as it arrives. Checking the decoded objects
 * instead would miss what the SDK's decoding hides: it fills a missing field with its default
 * and drops keys it does not know.
 *
 * An answer that breaks A2A 1.0 fails its call: a plain answer makes `fetch` reject, a bad
 * event errors the response body, both with an `A2AViolation` naming the field and the rule.
 */
import { JsonRpcResponse, restError } from './a2a-binding-schema.js';
import { answerViolations, StreamCheck, STREAMING_METHODS, type A2ACall, type A2AMethod } from './a2a-calls.js';
import { violations } from './a2a-schema.js';
import { violation } from './a2a-violations.js';

type Binding = 'JSON-RPC' | 'HTTP+JSON' | 'card';

/** The platform's own `fetch`, as it was before anything here replaced the global one. */
const platformFetch = globalThis.fetch;

export interface CheckingFetchOptions {
  /** The fetch to check the answers of (default: the platform's own). */
  inner?: typeof fetch;
  /**
   * What to do with a request that is not an A2A call this check knows: `fail` (for an SDK
   * client, whose every call is one: nothing goes unchecked by mistake) or `pass` it through
   * unchecked (for the global `fetch` of a test, which also fetches pages and model servers).
   */
  unknown?: 'fail' | 'pass';
}

/** Wraps a fetch so that every A2A answer it fetches is checked. */
export function checkingFetch(options: CheckingFetchOptions = {}): typeof fetch {
  const inner = options.inner ?? platformFetch;
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const verb = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    const body = typeof init?.body === 'string' ? init.body : undefined;
    const described = describe(url, verb, body);
    if (!described) {
      if (options.unknown === 'pass') return inner(input, init);
      throw violation([
        `${verb} ${url.pathname}: not an A2A 1.0 call this check knows, so its answer would go unchecked`,
      ]);
    }
    const response = await inner(input, init);
    const { binding, call } = described;
    // A2A 1.1 is 1.0 with the task's generation as a field: checked as 1.0 once that field is seen to be well formed.
    const v11 = new Headers(init?.headers).get('a2a-version') === '1.1';
    const isStream = (response.headers.get('content-type') ?? '').startsWith('text/event-stream');
    if (isStream && response.body) {
      if (!STREAMING_METHODS.has(call.method))
        throw violation([`${call.method}: answered with an event stream, but it is not a streaming method`]);
      const events = new StreamCheck(call, ` (${binding})`);
      const checked = checkEvents(response.body, (type, data) =>
        eventViolations(binding, call, events, type, v11 ? as10(data) : data),
      );
      return new Response(checked, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    }
    const text = await response.text();
    const problems = answerTextViolations(binding, call, response.status, v11 ? as10(text) : text);
    if (problems.length > 0) throw violation(problems);
    return new Response(text === '' ? null : text, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/**
 * A 1.1 answer's JSON as 1.0 has it: without the `generation` of its tasks and events (issue
 * 36), which must be an int64 in ProtoJSON (a decimal string). One that is not stays, and fails.
 */
function as10(text: string): string {
  const json = parse(text);
  if (json === undefined) return text;
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (value === null || typeof value !== 'object') return value;
    const entries = Object.entries(value).filter(
      ([key, inner]) => !(key === 'generation' && typeof inner === 'string' && /^\d+$/.test(inner)),
    );
    return Object.fromEntries(entries.map(([key, inner]) => [key, strip(inner)]));
  };
  return JSON.stringify(strip(json));
}

/** Which call a request is, from the JSON-RPC method or the HTTP+JSON route (spec 11.3). */
function describe(url: URL, verb: string, body: string | undefined): { binding: Binding; call: A2ACall } | undefined {
  if (url.pathname.endsWith('/.well-known/agent-card.json'))
    return { binding: 'card', call: { method: 'AgentCard', params: {} } };
  // The MCP servers of the tool tests speak JSON-RPC too, at `/mcp`: not A2A.
  if (url.pathname.endsWith('/mcp')) return undefined;
  const json = parse(body);
  if (json?.jsonrpc !== undefined) {
    const params = json.params ?? {};
    const historyLength = params.configuration?.historyLength ?? params.historyLength;
    return {
      binding: 'JSON-RPC',
      call: {
        method: json.method,
        params: { historyLength, pageSize: params.pageSize, includeArtifacts: params.includeArtifacts },
      },
    };
  }
  const query = url.searchParams;
  const number = (name: string) => (query.has(name) ? Number(query.get(name)) : undefined);
  const params = {
    historyLength: number('historyLength') ?? json?.configuration?.historyLength,
    pageSize: number('pageSize'),
    includeArtifacts: query.has('includeArtifacts') ? query.get('includeArtifacts') === 'true' : undefined,
  };
  const routes: [string, RegExp, A2AMethod][] = [
    ['POST', /\/message:send$/, 'SendMessage'],
    ['POST', /\/message:stream$/, 'SendStreamingMessage'],
    ['POST', /\/tasks\/[^/]+:cancel$/, 'CancelTask'],
    ['GET', /\/tasks\/[^/]+:subscribe$/, 'SubscribeToTask'],
    ['POST', /\/tasks\/[^/]+:subscribe$/, 'SubscribeToTask'],
    ['POST', /\/tasks\/[^/]+\/pushNotificationConfigs$/, 'CreateTaskPushNotificationConfig'],
    ['GET', /\/tasks\/[^/]+\/pushNotificationConfigs$/, 'ListTaskPushNotificationConfigs'],
    ['GET', /\/tasks\/[^/]+\/pushNotificationConfigs\/[^/]+$/, 'GetTaskPushNotificationConfig'],
    ['DELETE', /\/tasks\/[^/]+\/pushNotificationConfigs\/[^/]+$/, 'DeleteTaskPushNotificationConfig'],
    ['GET', /\/tasks\/[^/]+$/, 'GetTask'],
    ['GET', /\/tasks$/, 'ListTasks'],
    ['GET', /\/extendedAgentCard$/, 'GetExtendedAgentCard'],
  ];
  const route = routes.find(([method, path]) => method === verb && path.test(url.pathname));
  return route && { binding: 'HTTP+JSON', call: { method: route[2], params } };
}

/** The problems of a whole (not streamed) answer. */
function answerTextViolations(binding: Binding, call: A2ACall, status: number, text: string): string[] {
  const root = `${call.method} (${binding}, HTTP ${status})`;
  if (binding === 'HTTP+JSON' && call.method === 'DeleteTaskPushNotificationConfig' && status < 300) return [];
  // The card not changed since the ETag the request named: no body (a 304 has none).
  if (binding === 'card' && status === 304) return text === '' ? [] : [`${root}: a body after a 304`];
  const json = parse(text);
  if (json === undefined) return [`${root}: the body is not JSON: ${text.slice(0, 120)}`];
  if (binding === 'JSON-RPC') {
    const envelope = violations(JsonRpcResponse, json, root);
    if (envelope.length > 0 || json.error) return envelope;
    return answerViolations(call, json.result, `${root} result`);
  }
  if (status >= 300) return violations(restError(status), json, root);
  return answerViolations(call, json, root);
}

/** The problems of one Server-Sent Event of a stream. */
function eventViolations(binding: Binding, call: A2ACall, events: StreamCheck, type: string, data: string): string[] {
  const root = `${call.method} (${binding}) event`; // for problems with the envelope
  const json = parse(data);
  if (json === undefined) return [`${root}: the data is not JSON: ${data.slice(0, 120)}`];
  if (binding === 'JSON-RPC') {
    const envelope = violations(JsonRpcResponse, json, root);
    if (envelope.length > 0 || json.error) return envelope;
    return events.event(json.result);
  }
  if (type === 'error') return violations(restError(), json, `${root} (error)`);
  return events.event(json);
}

/**
 * Passes an event stream through, checking each complete event (`event:` and `data:` lines
 * up to a blank line) before the bytes that end it go on; a bad event errors the stream, so
 * the SDK never yields it.
 */
function checkEvents(
  body: ReadableStream<Uint8Array>,
  check: (type: string, data: string) => string[],
): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  let buffer = '';
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        buffer += decoder.decode(chunk, { stream: true });
        const blocks = buffer.split(/\r?\n\r?\n/);
        buffer = blocks.pop() ?? '';
        for (const block of blocks) {
          let type = 'message';
          const data: string[] = [];
          for (const line of block.split(/\r?\n/)) {
            if (line.startsWith('event:')) type = line.slice(6).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
          }
          if (data.length === 0) continue; // a comment or keep-alive
          const problems = check(type, data.join('\n'));
          if (problems.length > 0) {
            controller.error(violation(problems));
            return;
          }
        }
        controller.enqueue(chunk);
      },
    }),
  );
}

/**
 * Replaces the global `fetch` of this process with one that checks every A2A answer it gets
 * and passes anything else through: a test that talks to the harness with plain `fetch` (a
 * malformed request, a header, the card) is held to A2A 1.0 as the SDK clients are.
 */
export function checkGlobalFetch(): void {
  globalThis.fetch = checkingFetch({ unknown: 'pass' });
}

function parse(text: string | undefined): any {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
