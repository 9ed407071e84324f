/**
 * Signing the page in (issue 38): when the card asks for a bearer token, the page asks for one,
 * keeps it for this tab's session only (sessionStorage: gone when the tab closes, never written
 * to disk by the page), sends it with every call, and when the harness refuses it (401
 * `invalid_token`: expired, say) says so plainly and asks for a new one; the call waiting on it
 * goes on with the new token.
 */
import type { AgentCard } from '@a2a-js/sdk';

const TOKEN_KEY = 'tiny-harness/token';

/** Shows the sign-in form with a sentence saying why, and resolves with the token typed. */
export type TokenPrompt = (why: string) => Promise<string>;

let prompt: TokenPrompt | undefined;
/** One question at a time: calls refused together wait for the same answer. */
let asking: Promise<string> | undefined;

/** How the page asks (main.ts sets the form's); without one, a refusal is left to the caller. */
export function setTokenPrompt(ask: TokenPrompt): void {
  prompt = ask;
}

/** Whether the card's security requirements ask for a bearer token (its bearer or OpenID Connect scheme). */
export function cardNeedsToken(card: AgentCard): boolean {
  const names = (card.securityRequirements ?? []).flatMap((requirement) => Object.keys(requirement.schemes ?? {}));
  return names.some((name) => {
    const scheme = card.securitySchemes?.[name]?.scheme;
    return (
      scheme?.$case === 'openIdConnectSecurityScheme' ||
      scheme?.$case === 'oauth2SecurityScheme' ||
      (scheme?.$case === 'httpAuthSecurityScheme' && scheme.value.scheme.toLowerCase() === 'bearer')
    );
  });
}

export function keptToken(): string | undefined {
  try {
    return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

function keep(token: string | undefined): void {
  try {
    if (token === undefined) sessionStorage.removeItem(TOKEN_KEY);
    else sessionStorage.setItem(TOKEN_KEY, token);
  } catch {
    // Storage refused (a private window's quota): the token lasts as long as the page then.
  }
}

/** Asks for a token (once for all the calls waiting) and keeps it. */
export function askForToken(why: string): Promise<string> {
  if (!prompt) return Promise.reject(new Error(why));
  asking ??= prompt(why)
    .then((token) => {
      keep(token);
      return token;
    })
    .finally(() => (asking = undefined));
  return asking;
}

/** `init` with the kept token in `Authorization`, when there is one. */
export function withToken(init: RequestInit | undefined): RequestInit | undefined {
  const token = keptToken();
  if (token === undefined) return init;
  const headers = new Headers(init?.headers);
  headers.set('authorization', `Bearer ${token}`);
  return { ...init, headers };
}

/**
 * What the page says when the harness refuses its token, from the answer's
 * `WWW-Authenticate`: expired, refused for another reason (its description), or none given yet.
 */
export function refusalText(response: Response): string {
  const header = response.headers.get('www-authenticate') ?? '';
  const description = /error_description="([^"]*)"/.exec(header)?.[1];
  if (!/error="invalid_token"/.test(header)) return 'This agent needs you to sign in: paste your token.';
  if (description && /expired/i.test(description)) return 'Your token has expired: paste a new one to go on.';
  return `The agent refused your token${description ? ` (${description})` : ''}: paste another one.`;
}

/**
 * Sends `init` with the kept token through `send`; on a 401 the token is dropped, a new one
 * asked for, and the request sent again with it (the page's calls are JSON: their bodies are strings).
 */
export async function signedIn(
  send: (init: RequestInit | undefined) => Promise<Response>,
  init: RequestInit | undefined,
): Promise<Response> {
  const response = await send(withToken(init));
  if (response.status !== 401 || !prompt) return response;
  keep(undefined);
  void response.body?.cancel().catch(() => undefined);
  await askForToken(refusalText(response));
  return signedIn(send, init);
}

/** The page's sign-in form as a {@link TokenPrompt}: shown with why, hidden again once a token is given. */
export function formPrompt(form: HTMLFormElement, why: HTMLElement, input: HTMLInputElement): TokenPrompt {
  return (reason) =>
    new Promise((resolve) => {
      why.textContent = reason;
      form.hidden = false;
      input.value = '';
      input.focus();
      const submitted = (event: SubmitEvent) => {
        event.preventDefault();
        const token = input.value.trim();
        if (token === '' || /\s/.test(token)) return;
        form.removeEventListener('submit', submitted);
        form.hidden = true;
        input.value = '';
        resolve(token);
      };
      form.addEventListener('submit', submitted);
    });
}
