/**
 * The elicitation extension's JSON Schema (spec/elicitation-extension-v1.schema.json), compiled
 * once: tests hold the questions, answers and ends the harness sends to it (issue 39).
 */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';

const schema = JSON.parse(
  readFileSync(new URL('../../spec/elicitation-extension-v1.schema.json', import.meta.url), 'utf8'),
);
const ajv = new Ajv2020({ strict: false, allErrors: true });
const validate = ajv.compile(schema);

/** Why `data` is not a valid data part of the extension, or undefined when it is. */
export function elicitationViolation(data: unknown): string | undefined {
  return validate(data) ? undefined : ajv.errorsText(validate.errors);
}
