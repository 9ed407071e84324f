/**
 * The tool-calls extension's JSON Schema (spec/tool-calls-extension-v1.schema.json), compiled
 * once: tests hold every tool-call data part the harness sends or keeps to it (TOOL-1).
 */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Message, Part } from '@a2a-js/sdk';
import { TOOL_CALL_KEY } from '../../src/wire.js';

const schema = JSON.parse(
  readFileSync(new URL('../../spec/tool-calls-extension-v1.schema.json', import.meta.url), 'utf8'),
);
const ajv = new Ajv2020({ strict: false, allErrors: true });
const validateAny = ajv.compile(schema);
const validateCall = ajv.compile({ $ref: `${schema.$id}#/$defs/ToolCall` });

/** Why `data` is not a valid tool-call data part (`ToolCall` or `Answers`), or undefined when it is. */
export function toolCallsViolation(data: unknown): string | undefined {
  return validateAny(data) ? undefined : ajv.errorsText(validateAny.errors);
}

/** Why `data` is not a valid `ToolCall`, or undefined when it is. */
export function toolCallViolation(data: unknown): string | undefined {
  return validateCall(data) ? undefined : ajv.errorsText(validateCall.errors);
}

function dataParts(parts: readonly Part[] | undefined): Record<string, unknown>[] {
  return (parts ?? []).flatMap((part) =>
    part.content?.$case === 'data' ? [part.content.value as Record<string, unknown>] : [],
  );
}

/**
 * Throws unless every tool-call report among `messages` is valid: each message marked with
 * `tiny-harness/tool-call` holds one text part then one valid `ToolCall`, and every data part
 * shaped like a call anywhere (a turn's closing or pausing message) is a valid `ToolCall`.
 */
export function assertValidToolCallParts(messages: readonly (Message | undefined)[]): number {
  let checked = 0;
  for (const message of messages) {
    if (!message) continue;
    if (message.metadata?.[TOOL_CALL_KEY] !== undefined) {
      const kinds = message.parts.map((part) => part.content?.$case).join(',');
      if (kinds !== 'text,data')
        throw new Error(`a tool-call report must hold a text part then a data part, not ${kinds}`);
    }
    for (const data of dataParts(message.parts)) {
      if (typeof data.status !== 'string' || typeof data.tool !== 'string') continue;
      const why = toolCallViolation(data);
      if (why) throw new Error(`invalid tool call ${JSON.stringify(data).slice(0, 300)}: ${why}`);
      checked += 1;
    }
  }
  return checked;
}
