/**
 * Where the clients' bearer token comes from (issue 38): `--token`, `TINY_HARNESS_TOKEN`, or a
 * command whose output is the token (`--token-command "gcloud auth print-identity-token"`), run
 * again when the server says the token is no longer good (401 `invalid_token`).
 */
import { execFile } from 'node:child_process';
import { InterceptingCall, status as grpcStatus, type Interceptor } from '@grpc/grpc-js';

/** The environment variable a token is read from when no flag gives one. */
export const TOKEN_ENV = 'TINY_HARNESS_TOKEN';

/** The longest a token command may take (a sign-in prompt of a provider's CLI takes a while). */
const COMMAND_TIMEOUT_MS = 120_000;

export interface TokenSource {
  /** The token to send now. */
  current(): Promise<string>;
  /** A new token after the server refused the current one; undefined when there is no other to be had. */
  refresh(): Promise<string | undefined>;
}

/** A token given once: it is what it is. */
export function fixedToken(token: string): TokenSource {
  return { current: async () => token, refresh: async () => undefined };
}

/** The output of `command` (run by the shell), run on first use and again on each refresh; concurrent refreshes share one run. */
export function commandToken(
  command: string,
  run: (command: string) => Promise<string> = runTokenCommand,
): TokenSource {
  let token: Promise<string> | undefined;
  let refreshing: Promise<string> | undefined;
  return {
    current: () => (token ??= run(command)),
    refresh: async () => {
      refreshing ??= run(command).finally(() => (refreshing = undefined));
      token = refreshing;
      return token;
    },
  };
}

/**
 * Runs a token command with the user's shell, its standard error passed through (a provider's
 * CLI may ask something there); its output, trimmed, is the token. A failure names the command
 * and its exit status, never what it printed.
 */
export function runTokenCommand(command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.platform === 'win32' ? 'cmd.exe' : '/bin/sh',
      process.platform === 'win32' ? ['/d', '/s', '/c', command] : ['-c', command],
      { timeout: COMMAND_TIMEOUT_MS, maxBuffer: 1 << 20, windowsHide: true },
      (error, stdout) => {
        if (error) {
          const how = error.killed ? 'took too long' : `failed (exit status ${error.code ?? 'unknown'})`;
          return reject(new TokenCommandError(`the token command "${command}" ${how}`));
        }
        const token = stdout.trim();
        if (token === '' || /\s/.test(token))
          return reject(new TokenCommandError(`the token command "${command}" did not print one token`));
        resolve(token);
      },
    );
    child.stderr?.pipe(process.stderr);
  });
}

export class TokenCommandError extends Error {
  override name = 'TokenCommandError';
}

/**
 * The token source the flags and the environment give: `--token-command`, else `--token`, else
 * `TINY_HARNESS_TOKEN`; none without any. A sentence saying what is wrong when both flags are given.
 */
export function tokenSourceOf(
  flags: { token?: string; tokenCommand?: string },
  env: Readonly<Record<string, string | undefined>>,
): TokenSource | undefined | string {
  if (flags.token !== undefined && flags.tokenCommand !== undefined) return 'give --token or --token-command, not both';
  if (flags.tokenCommand !== undefined) {
    if (flags.tokenCommand.trim() === '') return '--token-command needs a command';
    return commandToken(flags.tokenCommand);
  }
  const token = flags.token ?? (env[TOKEN_ENV] || undefined);
  if (token === undefined) return undefined;
  if (token.trim() === '' || /\s/.test(token.trim()))
    return `${flags.token !== undefined ? '--token' : TOKEN_ENV} must be one token`;
  return fixedToken(token.trim());
}

/** Whether a response refuses the token as no longer good (RFC 6750's `invalid_token`). */
export function refusesToken(response: Response): boolean {
  return response.status === 401 && /error="invalid_token"/.test(response.headers.get('www-authenticate') ?? '');
}

/** How a connection sends the token: on every call, and again after a refusal with a new one. */
export interface TokenAuth {
  /** `fetch` for the HTTP bindings and the card: a request refused with `invalid_token` is sent once more with a new token. */
  fetch: typeof fetch;
  /** Run before each call: a token gRPC refused (UNAUTHENTICATED) is renewed before the next call. */
  beforeCall(): Promise<void>;
  /** Notes gRPC's refusals of the token. */
  grpcInterceptor: Interceptor;
}

/**
 * Puts the token in `sent` (the headers every request carries, the raw calls' included), and
 * keeps it there as `tokens` renews it.
 */
export async function tokenAuth(sent: Record<string, string>, tokens: TokenSource): Promise<TokenAuth> {
  const key = Object.keys(sent).find((name) => name.toLowerCase() === 'authorization') ?? 'Authorization';
  sent[key] = `Bearer ${await tokens.current()}`;
  let refused = false;
  const renew = async () => {
    const fresh = await tokens.refresh();
    if (fresh !== undefined) sent[key] = `Bearer ${fresh}`;
    return fresh;
  };
  return {
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      if (!refusesToken(response)) return response;
      const fresh = await renew();
      if (fresh === undefined) return response;
      const headers = new Headers(init?.headers);
      headers.set('authorization', `Bearer ${fresh}`);
      return fetch(input, { ...init, headers });
    },
    beforeCall: async () => {
      if (!refused) return;
      refused = false;
      await renew();
    },
    grpcInterceptor: (options, nextCall) =>
      new InterceptingCall(nextCall(options), {
        start(metadata, listener, next) {
          next(metadata, {
            onReceiveStatus(status, nextStatus) {
              if (status.code === grpcStatus.UNAUTHENTICATED) refused = true;
              nextStatus(status);
            },
          });
        },
      }),
  };
}
