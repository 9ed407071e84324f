/**
 * Reads the configuration file at start-up. Without a file the harness runs on defaults (the
 * built-in models, plus whatever the environment and an Ollama server offer). A file that is
 * named but cannot be read or parsed is `config_unreadable`; one that parses but does not fit
 * the schema is `config_invalid`, with one `key.path: message` per problem.
 */
import { readFile } from 'node:fs/promises';
import { HarnessError } from '../errors.js';
import { configSchema, defaultConfig, describeConfigIssue, type HarnessConfig } from './schema.js';

/** Messages name the file as the user wrote it, never a resolved absolute path. */
export async function loadConfig(file?: string): Promise<HarnessConfig> {
  if (file === undefined) return defaultConfig();

  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'it does not exist'
        : code === 'EACCES'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'it is a directory'
            : 'it cannot be read';
    throw new HarnessError('config_unreadable', `Cannot read the config file "${file}": ${why}.`);
  }
  return parseConfig(text, file);
}

/** Validates config text; `file` only names the source in messages. */
export function parseConfig(text: string, file = 'config'): HarnessConfig {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new HarnessError(
      'config_unreadable',
      `The config file "${file}" is not valid JSON${whereJSONFailed(text, error)}.`,
    );
  }
  const result = configSchema.safeParse(json);
  if (!result.success) {
    const lines = result.error.issues.map(describeConfigIssue);
    throw new HarnessError('config_invalid', `The config file "${file}" is invalid: ${lines.join('; ')}.`);
  }
  return result.data;
}

/**
 * Where parsing stopped, as ` (line L, column C)`. V8's own message can quote the text around
 * the error, which might be a pasted key, so only its position is kept.
 */
function whereJSONFailed(text: string, error: unknown): string {
  const message = error instanceof Error ? error.message : '';
  const match = /at position (\d+)/.exec(message);
  const position = match ? Number(match[1]) : message.startsWith('Unexpected end') ? text.length : undefined;
  if (position === undefined) return '';
  const before = text.slice(0, position).split('\n');
  return ` (line ${before.length}, column ${before.at(-1)!.length + 1})`;
}
