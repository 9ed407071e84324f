/**
 * A tool's result as the text the model reads and the task keeps. MCP results are lists of
 * content (text, images, audio, embedded resources, links) with an optional structured value;
 * the harness talks to models in text, so each part becomes text, and what is not text is
 * named rather than sent. Output over the bound is cut, with a note that says how much.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

type Content = CallToolResult['content'][number];

function contentText(content: Content): string {
  switch (content.type) {
    case 'text':
      return content.text;
    case 'image':
    case 'audio':
      return `[${content.type} ${content.mimeType}, not shown]`;
    case 'resource':
      return 'text' in content.resource
        ? content.resource.text
        : `[resource ${content.resource.uri} (${content.resource.mimeType ?? 'binary'}), not shown]`;
    case 'resource_link':
      return `[resource ${content.uri}]`;
    default:
      return '';
  }
}

/** The result's text: its content parts, or its structured value when it has no content. */
export function resultText(result: CallToolResult): string {
  const parts = (result.content ?? []).map(contentText).filter((text) => text !== '');
  if (parts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return parts.join('\n');
}

/** `text` within `maxChars`, ending with a note when it was cut. */
export function boundOutput(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  return `${text.slice(0, maxChars)}\n[output cut: the first ${maxChars} of ${text.length} characters are shown]`;
}

/**
 * The most characters of one call's output kept whole, in an artifact of the task, when it is
 * over the bound the model and the call's report get: a client can read all of a large result
 * without the task holding an unbounded one (a tool may return anything).
 */
export const OUTPUT_ARTIFACT_MAX_CHARS = 1_000_000;

/** A tool's output as the model and the report get it, and, when that was cut, the whole (within its own ceiling). */
export function splitOutput(text: string, maxChars: number): { output: string; full?: string } {
  if (text.length <= maxChars) return { output: text };
  return { output: boundOutput(text, maxChars), full: boundOutput(text, OUTPUT_ARTIFACT_MAX_CHARS) };
}
