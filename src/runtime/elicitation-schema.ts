/**
 * Checking a form's answer against the JSON Schema the MCP server asked with (ajv). Loaded with
 * the first form answered (`elicitation-answers.ts`): a harness whose tools never ask loads no ajv.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { LRUCache } from 'lru-cache';
import type { ElicitationData } from '../elicitations.js';
import { HarnessError } from '../errors.js';

const ajv = new Ajv({ allErrors: true, strict: false });
/** A few recent questions' validators, not every one ever asked. */
const validators = new LRUCache<string, ValidateFunction>({ max: 100 });

/**
 * Why `content` does not fit `question`'s schema, in words naming its fields; undefined when it
 * fits. Throws `params_invalid` when the schema itself cannot be compiled.
 */
export function formProblem(question: ElicitationData, content: unknown): string | undefined {
  let validate = validators.get(question.id);
  if (!validate) {
    try {
      validate = ajv.compile(question.schema ?? { type: 'object' });
    } catch {
      throw new HarnessError('params_invalid', "The question's schema cannot be checked; decline or cancel it.");
    }
    validators.set(question.id, validate);
  }
  return validate(content) ? undefined : ajv.errorsText(validate.errors, { dataVar: 'content' });
}
