/**
 * What a command file says: YAML front matter between a first line `---` and the next line
 * `---`, then the prompt template. The zod schema below is the single source of the allowed
 * keys, their types and the messages a person reads when the file is wrong. The schema is
 * strict: an unknown key (usually a typo) fails the file rather than being ignored.
 */
import { parseDocument } from 'yaml';
import * as z from 'zod';
import { withoutMarkers } from './markers.js';

/** `provider:model`, split at the first colon; the model part may hold colons (`local:llama3.2:3b`). */
export const MODEL_ID_PATTERN = /^[^\s:]+:\S+$/;

/** A command file's content, checked. Optional keys are absent rather than empty. */
export interface CommandFileContent {
  /** Shown on the card and by `/help`. */
  description: string;
  /** Shown after the name in completions, e.g. `<file> [focus]`. */
  argumentHint?: string;
  /** `provider:model` the command's turn runs on; without it, the task's model. */
  model?: string;
  /**
   * The only tools the command's turn may call (TOOL-3): names as the model sees them, or
   * `server:*`; and `Bash(<prefix>:*)` rules, which grant its `` !`cmd` `` markers (CMD-38).
   */
  allowedTools?: string[];
  /**
   * Absent: the prompt runs inline, as a turn on the task (CMD-38). `fork`: as a sub-task sent the
   * conversation; `none`: as a sub-task sent only the prompt.
   */
  context?: 'fork' | 'none';
  /** The body after the front matter, trimmed: see `template.ts`. */
  template: string;
}

/** Either the content, or every reason the file was refused (each a phrase, no path). */
export type CommandFileParse = { ok: true; content: CommandFileContent } | { ok: false; reasons: string[] };

const QUOTE_ADVICE = 'quote the value if YAML reads it as something else, e.g. argument-hint: "[file]"';
const YAML_ADVICE = 'put a value in double quotes when it contains ": " or starts with [, {, *, &, ! or a quote';

/** A string key: the message says which key and what was found instead. */
function stringKey(key: string) {
  return z.string({
    error: (issue) =>
      issue.input === undefined
        ? `"${key}" is missing: add a line "${key}: ..." to the front matter`
        : issue.input === null
          ? `"${key}" has no value: write it after "${key}: "`
          : `"${key}" must be a string, not ${describeValue(issue.input)} (${QUOTE_ADVICE})`,
  });
}

/** An optional string key: a key with no value (`model:`) counts as absent. */
function optionalStringKey(key: string) {
  return stringKey(key)
    .trim()
    .nullish()
    .transform((value) => (value === null || value === '' ? undefined : value));
}

/**
 * `allowed-tools`: a YAML list, or one string of names separated by commas (as Claude Code's
 * command files write it). An empty list allows no tool.
 */
const allowedToolsKey = z
  .union([z.array(z.string().trim().min(1, '"allowed-tools" has an empty entry')), z.string()], {
    error: '"allowed-tools" must be a list of tool names, or one line of names separated by commas',
  })
  .nullish()
  .transform((value) =>
    value === null || value === undefined
      ? undefined
      : typeof value === 'string'
        ? value
            .split(',')
            .map((name) => name.trim())
            .filter((name) => name !== '')
        : value,
  );

const frontMatterSchema = z.strictObject(
  {
    description: optionalStringKey('description'),
    'argument-hint': optionalStringKey('argument-hint'),
    model: optionalStringKey('model').refine(
      (value) => value === undefined || !/\s/.test(value),
      '"model" must be "provider:model", e.g. "builtin:stats" or "openai:gpt-5-mini", or a model name alone when one provider offers it',
    ),
    'allowed-tools': allowedToolsKey,
    // Claude Code's own key: there, whether its model may run the command by itself. Accepted, so
    // that its files load as they are, and without effect: here only a person runs a command.
    'disable-model-invocation': z.boolean({ error: '"disable-model-invocation" must be true or false' }).nullish(),
    context: z
      .enum(['inline', 'fork', 'none'], {
        error: (issue) =>
          issue.input === 'conversation'
            ? '"context: conversation" is no longer a value: write "fork" for a sub-task that is sent the conversation, or leave the key out to run inline'
            : '"context" must be "inline" (the default: a turn in the conversation), "fork" (a sub-task sent the conversation) or "none" (a sub-task sent only the prompt)',
      })
      .nullish()
      .transform((value) => (value === 'inline' || value === null ? undefined : value)),
  },
  {
    error: (issue) => {
      if (issue.code !== 'unrecognized_keys') return undefined;
      const which = issue.keys.map((key) => `"${key}"`).join(', ');
      return `unknown front-matter key${issue.keys.length === 1 ? '' : 's'} ${which} (the keys are description, argument-hint, model, allowed-tools, context and disable-model-invocation)`;
    },
  },
);

/** The keys a command file may set, in the order docs/commands.md lists them. */
export const FRONT_MATTER_KEYS = Object.keys(frontMatterSchema.shape) as readonly string[];

/** How much of the body's first line a command without a description is described by. */
const DESCRIPTION_FROM_BODY_CHARS = 80;

/**
 * A description for a file that gives none: the prompt's first line with words left once Markdown
 * heading marks, placeholders and markers are taken out, cut short; "" when no line has any (the
 * loader then names the file).
 */
export function descriptionFromBody(body: string): string {
  const line =
    body
      .split(/\r?\n/)
      .map((l) =>
        withoutMarkers(l.replace(/^#+\s*/, ''))
          .replace(/\s+([,.;:!?])/g, '$1')
          .replace(/\s+/g, ' ')
          .replace(/^[\s,.;:!?-]+|[\s,;:-]+$/g, ''),
      )
      .find((l) => /[\p{L}\p{N}]/u.test(l)) ?? '';
  return line.length > DESCRIPTION_FROM_BODY_CHARS ? `${line.slice(0, DESCRIPTION_FROM_BODY_CHARS - 1)}…` : line;
}

/**
 * Reads a command file's text: front matter, then the template. A file without front matter
 * (as many of Claude Code's are) is all template. Never throws.
 */
export function parseCommandFile(text: string): CommandFileParse {
  if (!FENCE.test(text.replace(/^\uFEFF/, '').split(/\r?\n/, 1)[0] ?? '')) {
    const template = text.replace(/^\uFEFF/, '').trim();
    if (template === '')
      return {
        ok: false,
        reasons: ['the file is empty: write the prompt, optionally after front matter between two "---" lines'],
      };
    return { ok: true, content: { description: descriptionFromBody(template), template } };
  }
  const split = splitFrontMatter(text);
  if (!split.ok) return split;
  const yaml = parseYaml(split.yaml, split.yamlFirstLine);
  if (!yaml.ok) return yaml;

  const reasons: string[] = [];
  const result = frontMatterSchema.safeParse(yaml.value);
  if (!result.success) reasons.push(...result.error.issues.map((issue) => issue.message));
  const template = split.body.trim();
  if (template === '') reasons.push('the prompt is empty: write the prompt template after the closing "---" line');
  if (!result.success || reasons.length > 0) return { ok: false, reasons };

  const { description, 'argument-hint': argumentHint, model, 'allowed-tools': allowedTools, context } = result.data;
  return {
    ok: true,
    content: {
      description: description ?? descriptionFromBody(template),
      template,
      ...(argumentHint !== undefined && { argumentHint }),
      ...(model !== undefined && { model }),
      ...(allowedTools !== undefined && { allowedTools }),
      ...(context !== undefined && { context }),
    },
  };
}

export type FrontMatterSplit =
  { ok: true; yaml: string; yamlFirstLine: number; body: string } | { ok: false; reasons: string[] };

const FENCE = /^---[ \t]*$/;

/** Cuts the text at the fences. Accepts CRLF line ends and a leading byte-order mark. */
export function splitFrontMatter(text: string): FrontMatterSplit {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (!FENCE.test(lines[0] ?? '')) {
    return {
      ok: false,
      reasons: ['the file must start with front matter: a line "---", then "description: ...", then a line "---"'],
    };
  }
  const close = lines.findIndex((line, index) => index > 0 && FENCE.test(line));
  if (close === -1) return { ok: false, reasons: ['the front matter is not closed: add a line "---" after it'] };
  return {
    ok: true,
    yaml: lines.slice(1, close).join('\n'),
    yamlFirstLine: 2,
    body: lines.slice(close + 1).join('\n'),
  };
}

export type Yaml = { ok: true; value: unknown } | { ok: false; reasons: string[] };

/** Parses the front matter (command files and skills); an error names its line and column in the file, not in the block. */
export function parseYaml(yaml: string, firstLine: number): Yaml {
  const document = parseDocument(yaml, { uniqueKeys: true, prettyErrors: true });
  const error = document.errors[0];
  if (error) {
    const message = error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    const position = error.linePos?.[0];
    const where = position ? ` (line ${position.line + firstLine - 1}, column ${position.col})` : '';
    return { ok: false, reasons: [`the front matter is not valid YAML${where}: ${message} (${YAML_ADVICE})`] };
  }
  let value: unknown;
  try {
    value = document.toJS({ maxAliasCount: 100 });
  } catch (cause) {
    return {
      ok: false,
      reasons: [`the front matter is not valid YAML: ${cause instanceof Error ? cause.message : String(cause)}`],
    };
  }
  if (value === null || value === undefined) return { ok: true, value: {} };
  if (typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, reasons: [`the front matter must be "key: value" lines, not ${describeValue(value)}`] };
  }
  return { ok: true, value };
}

function describeValue(value: unknown): string {
  if (value === null) return 'an empty value';
  if (Array.isArray(value)) return 'a list';
  if (value instanceof Date) return 'a date';
  if (typeof value === 'object') return 'a mapping';
  return `the ${typeof value} ${JSON.stringify(value)}`;
}
