/** The `auth` key of the config file: who may call the agent, besides the tokens file (docs/security.md). */
import * as z from 'zod';

/** The signing algorithms a token may use: asymmetric only, so a public key can never verify an HMAC or `none`. */
export const OIDC_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
] as const;

/** The A2A methods by their names in A2A 1.0 (a test keeps the list equal to the bindings'). */
export const A2A_METHOD_NAMES = [
  'SendMessage',
  'SendStreamingMessage',
  'GetTask',
  'ListTasks',
  'CancelTask',
  'SubscribeToTask',
  'CreateTaskPushNotificationConfig',
  'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs',
  'DeleteTaskPushNotificationConfig',
  'GetExtendedAgentCard',
] as const;

/** 30 s, as `jose` waits by default: a flood of unknown key ids costs the provider one request per interval. */
export const DEFAULT_KEYS_REFETCH_INTERVAL_MS = 30_000;

const claimName = z.string().min(1).max(100);
const scopeList = z.array(z.string().regex(/^[!#-[\]-~]+$/, 'a scope is one word of printable characters')).min(1);

const oidcSchema = z
  .strictObject({
    issuer: z
      .url({ protocol: /^https?$/, error: 'Invalid URL (expected https://…)' })
      .refine(
        (value) => !URL.canParse(value) || isSecureOrLoopback(new URL(value)),
        'must be https:// (plain http only on a loopback address): its keys decide who may call',
      )
      .describe(
        "The provider's issuer, exactly as its tokens' `iss` says it (e.g. `https://accounts.google.com`); the discovery document is read from `{issuer}/.well-known/openid-configuration`.",
      ),
    audience: z
      .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
      .describe("The `aud` a token must carry (one of them, when a list): this agent's client id at the provider."),
    algorithms: z
      .array(z.enum(OIDC_ALGORITHMS))
      .min(1)
      .default(['RS256', 'ES256'])
      .describe('The signing algorithms accepted; never `none` or an HMAC (HS256…), which a public key cannot check.'),
    userClaim: claimName.default('sub').describe('The claim that names the user: every task is stored under it.'),
    tenantClaim: claimName
      .optional()
      .describe("A claim naming the user's tenant: the user is then `tenant/user`, and a token without it is refused."),
    clockSkewSeconds: z
      .number()
      .int()
      .min(0)
      .max(600)
      .default(60)
      .describe("How far apart this server's clock and the provider's may be when `exp` and `nbf` are checked."),
    requiredScopes: scopeList
      .optional()
      .describe('Scopes (`scope` or `scp` claim) every call needs; a token without one of them is refused with 403.'),
    methodScopes: z
      .partialRecord(z.enum(A2A_METHOD_NAMES), scopeList)
      .optional()
      .describe(
        'Scopes a call of one A2A method needs besides `requiredScopes`, by method (`{"SendMessage": ["agent.write"]}`).',
      ),
    keysRefetchIntervalMs: z
      .number()
      .int()
      .min(0)
      .max(86_400_000)
      .default(DEFAULT_KEYS_REFETCH_INTERVAL_MS)
      .describe(
        "The least time, in milliseconds, between two reads of the provider's keys (JWKS) on a token signed with a key id not seen: a rotated key is taken up without a restart, and a flood of forged ids costs the provider one request per interval.",
      ),
  })
  .describe('OpenID Connect: bearer tokens that are JWTs of this provider (docs/security.md).');

export const authSchema = z
  .strictObject({ oidc: oidcSchema.optional() })
  .describe(
    'How callers sign in besides the tokens file (`--tokens-file`, `TINY_HARNESS_TOKENS`): OpenID Connect tokens (docs/security.md).',
  );

/** https, or http to this machine only (a test issuer, a provider on the same host). */
function isSecureOrLoopback(url: URL): boolean {
  return url.protocol === 'https:' || ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
}

export type OidcConfig = z.output<typeof oidcSchema>;
