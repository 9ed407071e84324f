/**
 * The addresses clients are told to use, when they differ from where the harness listens:
 * behind a reverse proxy or a load balancer the card must name the proxy, or clients that
 * follow the card fail. One schema each, shared by the config file (`publicUrl`,
 * `publicGrpcAddress`) and the command line (`--public-url`, `--public-grpc-address`), so both
 * accept and refuse the same values with the same messages.
 */
import * as z from 'zod';

/**
 * An absolute http(s) URL without credentials, query or fragment, where the harness's root is
 * reached from outside, e.g. `https://agent.example.com` or `https://example.com/agent`.
 * Normalized without a trailing slash, so that paths are appended as `${url}/a2a/jsonrpc`.
 */
export const publicUrlSchema = z.string().transform((value, context) => {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  const problem =
    url === undefined
      ? 'must be an absolute URL such as https://agent.example.com'
      : url.protocol !== 'http:' && url.protocol !== 'https:'
        ? 'must start with http:// or https://'
        : url.username !== '' || url.password !== ''
          ? 'must not contain a user name or password'
          : url.search !== '' || url.hash !== '' || value.includes('?') || value.includes('#')
            ? 'must not have a query (?...) or a fragment (#...): give the address of the harness root'
            : undefined;
  if (problem !== undefined || url === undefined) {
    context.addIssue({ code: 'custom', message: problem ?? 'is not a URL' });
    return z.NEVER;
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
});

const GRPC_ADDRESS = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):(\d{1,5})$/;

/** `host:port` of the gRPC endpoint as reached from outside, e.g. `agent.example.com:443`. */
export const publicGrpcAddressSchema = z.string().refine((value) => {
  const port = GRPC_ADDRESS.exec(value)?.[1];
  return port !== undefined && Number(port) >= 1 && Number(port) <= 65535;
}, 'must be "host:port", e.g. "agent.example.com:443" (no scheme, no path)');

/** The value checked and normalized, or the message that says what is wrong with it. */
export function checkPublicAddress(
  schema: typeof publicUrlSchema | typeof publicGrpcAddressSchema,
  value: string,
): { value: string } | { problem: string } {
  const result = schema.safeParse(value);
  return result.success ? { value: result.data } : { problem: result.error.issues[0]?.message ?? 'is not valid' };
}
