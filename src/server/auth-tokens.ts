import { readFile } from 'node:fs/promises';
import { HarnessError } from '../errors.js';

/** The environment variable holding `user:token` pairs, comma-separated. */
export const TOKENS_ENV = 'TINY_HARNESS_TOKENS';
export const USER_NAME_PATTERN = /^[A-Za-z0-9._@-]+$/;
export const MIN_TOKEN_LENGTH = 16;

/** Token → user name. */
export type TokenTable = Map<string, string>;

export interface TokenSources {
  /** The environment to read {@link TOKENS_ENV} from. */
  env?: Readonly<Record<string, string | undefined>>;
  /** A file of `user:token` lines (`#` comments and blank lines ignored). */
  file?: string;
}

/**
 * The bearer tokens from the environment and/or a file, checked: undefined when neither gives
 * any (authentication stays off). A malformed entry throws `tokens_invalid` naming where it
 * is (file and line, or the variable and entry number) and never the token itself.
 */
export async function loadTokens(sources: TokenSources): Promise<TokenTable | undefined> {
  const table: TokenTable = new Map();
  const where = new Map<string, string>();
  const value = sources.env?.[TOKENS_ENV];
  if (value !== undefined && value.trim() !== '') {
    addEntries(table, where, parseTokenEnv(value));
  }
  if (sources.file !== undefined) {
    let text: string;
    try {
      text = await readFile(sources.file, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException)?.code;
      const why =
        code === 'ENOENT'
          ? 'no such file'
          : code === 'EACCES'
            ? 'permission denied'
            : code === 'EISDIR'
              ? 'it is a folder'
              : 'it cannot be read';
      throw new HarnessError('tokens_invalid', `Cannot read the tokens file "${sources.file}": ${why}.`, {
        cause: error,
      });
    }
    addEntries(table, where, parseTokenFile(text, sources.file));
  }
  return table.size > 0 ? table : undefined;
}

export interface TokenEntry {
  user: string;
  token: string;
  /** Where it was written, for messages: `file:line` or `TINY_HARNESS_TOKENS entry N`. */
  where: string;
}

/** The entries of a tokens file's text; `file` names it in messages. */
export function parseTokenFile(text: string, file: string): TokenEntry[] {
  const entries: TokenEntry[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    entries.push(parseEntry(line, `${file}:${index + 1}`, `line ${index + 1} of the tokens file "${file}"`));
  });
  return entries;
}

/** The entries of {@link TOKENS_ENV}: `user:token` pairs separated by commas. */
export function parseTokenEnv(value: string): TokenEntry[] {
  const entries: TokenEntry[] = [];
  value.split(',').forEach((raw, index) => {
    const item = raw.trim();
    if (item === '') return;
    entries.push(parseEntry(item, `${TOKENS_ENV} entry ${index + 1}`, `entry ${index + 1} of ${TOKENS_ENV}`));
  });
  return entries;
}

function parseEntry(text: string, where: string, described: string): TokenEntry {
  const colon = text.indexOf(':');
  const fail = (problem: string): never => {
    throw new HarnessError('tokens_invalid', `${capitalize(described)} ${problem}; write it as user:token.`);
  };
  if (colon < 0) fail('has no colon between a user name and a token');
  const user = text.slice(0, colon).trim();
  const token = text.slice(colon + 1).trim();
  if (!USER_NAME_PATTERN.test(user)) {
    fail(user === '' ? 'has no user name' : 'has a user name with characters other than letters, digits and . _ @ -');
  }
  if (/\s/.test(token)) fail('has a token with white space in it');
  if (token.length < MIN_TOKEN_LENGTH)
    fail(`has a token shorter than ${MIN_TOKEN_LENGTH} characters (use e.g. \`openssl rand -hex 32\`)`);
  return { user, token, where };
}

function addEntries(table: TokenTable, where: Map<string, string>, entries: TokenEntry[]): void {
  for (const entry of entries) {
    const owner = table.get(entry.token);
    if (owner !== undefined && owner !== entry.user) {
      throw new HarnessError(
        'tokens_invalid',
        `The token at ${entry.where} is also given to another user at ${where.get(entry.token)}; each token must name one user.`,
      );
    }
    table.set(entry.token, entry.user);
    if (!where.has(entry.token)) where.set(entry.token, entry.where);
  }
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
