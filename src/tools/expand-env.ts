/**
 * `${VAR}` and `${VAR:-default}` in MCP server settings, as `.mcp.json` files write them. A
 * variable that is unset (and has no default) is an error naming the variable, never its value:
 * a server started with half a header would fail later and less clearly.
 */
import { HarnessError } from '../errors.js';

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** `value` with each `${VAR}` replaced from `env`; `where` names the setting in the error. */
export function expandEnv(value: string, env: Readonly<Record<string, string | undefined>>, where: string): string {
  return value.replace(VARIABLE, (_match, name: string, fallback: string | undefined) => {
    const found = env[name];
    if (found !== undefined && found !== '') return found;
    if (fallback !== undefined) return fallback;
    throw new HarnessError('config_invalid', `${where} names the environment variable ${name}, which is not set.`);
  });
}

/** Every value of a record expanded (names are left as written). */
export function expandRecord(
  record: Readonly<Record<string, string>>,
  env: Readonly<Record<string, string | undefined>>,
  where: string,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(record).map(([name, value]) => [name, expandEnv(value, env, `${where}.${name}`)]),
  );
}
