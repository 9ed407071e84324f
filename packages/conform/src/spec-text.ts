/**
 * The specification the kit judges by, read from the package's `spec/` (copied there from the
 * repository's `spec/` when the package is built): the JSON Schema of the card params, and the
 * behaviour rules, so that a failure quotes the rule it breaks in the rule's own words.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const SCHEMA_FILE = 'commands-extension-v1.schema.json';
const RULES_FILE = 'behaviour.md';

function specFolder(): string {
  // The package's dist/: spec/ is beside it. Bundled into tiny-harness's dist/bundle/: the
  // harness's spec/, two folders up. Run from packages/conform/src/: the repository's spec/.
  for (const up of ['../spec/', '../../spec/', '../../../spec/']) {
    const folder = fileURLToPath(new URL(up, import.meta.url));
    if (existsSync(`${folder}${SCHEMA_FILE}`)) return folder;
  }
  throw new Error(`the specification files (spec/${SCHEMA_FILE}) are missing from this installation`);
}

/** The JSON Schema of the extension's card `params`. */
export function paramsSchema(): Record<string, unknown> {
  return JSON.parse(readFileSync(`${specFolder()}${SCHEMA_FILE}`, 'utf8')) as Record<string, unknown>;
}

let rules: Map<string, string> | undefined;

/** A behaviour rule's text (`CMD-4` …), on one line; '' for an unknown id. */
export function ruleText(id: string): string {
  rules ??= parseRules(readFileSync(`${specFolder()}${RULES_FILE}`, 'utf8'));
  return rules.get(id) ?? '';
}

/** `- **CMD-4** text …` up to the next rule, heading or blank line. */
export function parseRules(markdown: string): Map<string, string> {
  const found = new Map<string, string>();
  let current: { id: string; lines: string[] } | undefined;
  const close = () => {
    if (current) found.set(current.id, current.lines.join(' ').replace(/\s+/g, ' ').trim());
    current = undefined;
  };
  for (const line of markdown.split('\n')) {
    const start = /^- \*\*([A-Z]+-\d+)\*\*\s*(.*)$/.exec(line);
    if (start) {
      close();
      current = { id: start[1]!, lines: [start[2]!] };
    } else if (!line.trim() || line.startsWith('#')) {
      close();
    } else if (current) {
      current.lines.push(line.trim());
    }
  }
  close();
  return found;
}
