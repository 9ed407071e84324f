import type { ServerCallContext } from '@a2a-js/sdk/server';

/**
 * The SDK's HTTP+JSON transport (1.3.0) drops the query of `GET /tasks/{id}/pushNotificationConfigs`:
 * it calls `listTaskPushNotificationConfigs` with `pageSize: 0, pageToken: ""` whatever was
 * asked. So the HTTP app puts the request's `pageSize` and `pageToken` in the call context's
 * `state` under this key (checked by the edge schema first), and the handler reads them there
 * when the request itself has none. JSON-RPC and gRPC pass both in the request.
 */
export const REST_PAGE_KEY = 'tiny-harness/rest-page';

export interface RestPage {
  pageSize?: number;
  pageToken?: string;
}

/** What to keep under {@link REST_PAGE_KEY} for a request with this query: none when it asks no page. */
export function restPageOf(query: Record<string, unknown>): RestPage | undefined {
  const { pageSize, pageToken } = query;
  const page: RestPage = {};
  if (typeof pageSize === 'string' && /^\d{1,10}$/.test(pageSize)) page.pageSize = Number(pageSize);
  if (typeof pageToken === 'string' && pageToken !== '') page.pageToken = pageToken;
  return page.pageSize === undefined && page.pageToken === undefined ? undefined : page;
}

/** The page an HTTP+JSON call asked for in its query, if any. */
export function restPage(context: ServerCallContext | undefined): RestPage {
  return (context?.state.get(REST_PAGE_KEY) as RestPage | undefined) ?? {};
}
