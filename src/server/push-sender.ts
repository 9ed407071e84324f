import { Agent as HttpAgent, request as httpRequest, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { checkPublicUrl, publicOnlyLookup, refuseLiteralAddress } from '../public-network.js';
import { withTraceHeaders } from '../telemetry/propagation.js';

export { isPublicAddress } from '../public-network.js';

/**
 * Where push notifications are POSTed (docs/push.md). A webhook is kept off the harness's own
 * networks by the shared guard (src/public-network.ts), both when a config is created
 * (`checkWebhookUrl`) and at every delivery, inside the connection's own DNS lookup. A redirect
 * is not followed: a 3xx is a failed delivery.
 */

/** Why a webhook URL is refused, or undefined when it may be used; resolves its host unless private networks are allowed. */
export function checkWebhookUrl(url: string, allowPrivate: boolean): Promise<string | undefined> {
  return checkPublicUrl(url, allowPrivate, 'push.allowPrivateNetworks');
}

export interface WebhookPost {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  allowPrivate: boolean;
  signal?: AbortSignal;
}

/**
 * Sockets kept open to receivers between deliveries: a pool per receiver (host and port), so a
 * receiver's next delivery skips the TCP (and TLS) handshake. Bounded: 32 sockets per receiver
 * and 128 in all (the deliverer makes at most 32 POSTs at once), and an idle one is closed after
 * 30 s, so a thousand receivers seen once hold no thousand sockets.
 */
const POOL = { keepAlive: true, maxSockets: 32, maxTotalSockets: 128, maxFreeSockets: 32, timeout: 30_000 };
const agents = { http: new HttpAgent(POOL), https: new HttpsAgent(POOL) };

/** POSTs `body`; resolves on a 2xx answer, rejects (with a message naming no secret) otherwise. */
export function postWebhook(post: WebhookPost): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const url = new URL(post.url);
    if (!post.allowPrivate) {
      try {
        refuseLiteralAddress(url);
      } catch (error) {
        return reject(error);
      }
    }
    const secure = url.protocol === 'https:';
    const options: RequestOptions = {
      method: 'POST',
      headers: withTraceHeaders({ ...post.headers, 'Content-Length': Buffer.byteLength(post.body) }),
      agent: secure ? agents.https : agents.http,
      signal: post.signal,
      ...(post.allowPrivate ? {} : { lookup: publicOnlyLookup as RequestOptions['lookup'] }),
    };
    const request = (secure ? httpsRequest : httpRequest)(url, options, (response) => {
      response.resume();
      const status = response.statusCode ?? 0;
      response.on('end', () => {
        clearTimeout(timer);
        if (status >= 200 && status < 300) resolve();
        else reject(new Error(`the receiver answered HTTP ${status}`));
      });
      response.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
    const timer = setTimeout(() => request.destroy(new Error(`no answer within ${post.timeoutMs} ms`)), post.timeoutMs);
    request.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    request.end(post.body);
  });
}
