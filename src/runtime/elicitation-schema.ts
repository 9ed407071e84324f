/**
 * Checking a form's answer against the JSON Schema the MCP server asked with (ajv). Loaded with
 * the first form answered (`elicitation-answers.ts`): a harness whose tools never ask loads no ajv.
 */
import { Ajv, type ValidateFunction } from 'ajv';

const ajv = new Ajv({ allErrors: true, strict: false });

/** A validator of `schema`; throws when the schema itself cannot be compiled. */
export function compileSchema(schema: object): ValidateFunction {
  return ajv.compile(schema);
}

/** Why `validate` refused its last input, in words naming `content`'s fields. */
export function refusalOf(validate: ValidateFunction): string {
  return ajv.errorsText(validate.errors, { dataVar: 'content' });
}
