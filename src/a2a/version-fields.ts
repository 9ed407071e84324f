import type { StreamResponse, Task } from '@a2a-js/sdk';
import type { CallMethod } from './steps.js';

/*
 * Where a JSON binding (JSON-RPC, HTTP+JSON) lets the protocol version a call asks for
 * (`A2A-Version`) shape its fields beyond what the SDK's generated converters know. A2A 1.1
 * adds fields (`ifGenerationMatch` on SendMessage, `currentGeneration` on GetTask, `generation`
 * on tasks and events) that the SDK's decoders drop and its encoders never write: the bindings
 * call these two functions around the converters, so the version's own fields survive them.
 * Under A2A 1.0 there are none: both leave the call as the converters make it (issue 36).
 */

/**
 * The fields of a call's params as the request wrote them (JSON-RPC's `params`; HTTP+JSON's
 * body, or a GET's query, its values strings) that its decoded params should carry besides
 * what the SDK's decoder kept: merged onto the decoded params object. None for A2A 1.0.
 */
export function requestFieldsOf(
  _version: string,
  _method: CallMethod,
  _params: Record<string, unknown>,
): Record<string, unknown> {
  return {};
}

/**
 * The JSON a binding writes for `item` (a task, or a streamed event) as the SDK's encoder made
 * it (`json`), in the form the call's version wants. Unchanged for A2A 1.0.
 */
export function responseJsonFor(_version: string, json: unknown, _item: StreamResponse | Task): unknown {
  return json;
}
