/**
 * The words of a tool call's question to the user (issue 39): the pause's text, which any
 * client shows, and what the model is told of a question whose call could not go on.
 */
import type { ElicitationAnswer, ElicitationData } from '../elicitations.js';

/** The pause's text: who asks, what, and how to answer. */
export function questionText(data: ElicitationData): string {
  const who = `The MCP server "${data.server}" asks, during ${data.tool}:`;
  if (data.mode === 'url')
    return `${who} ${data.message}\nOpen ${data.url} and finish there, then say "done" (or wait: the server may say it is done itself).`;
  const fields = fieldLines(data.schema);
  return [
    `${who} ${data.message}`,
    ...(fields.length > 0 ? ['Fields:', ...fields] : []),
    `Answer with a data part {"elicitation": "${data.id}", "action": "accept", "content": {…}}, or "decline" or "cancel" as the action.`,
  ].join('\n');
}

/** One line per field of a form's schema: its name, type, whether required, and its choices. */
function fieldLines(schema: Record<string, unknown> | undefined): string[] {
  const properties = (schema?.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set(Array.isArray(schema?.required) ? (schema.required as string[]) : []);
  return Object.entries(properties).map(([name, field]) => {
    const choices = Array.isArray(field.enum) ? ` (one of ${field.enum.map((v) => JSON.stringify(v)).join(', ')})` : '';
    const title = typeof field.description === 'string' ? ` – ${field.description}` : '';
    return `- ${name}: ${String(field.type ?? 'any')}${required.has(name) ? ', required' : ''}${choices}${title}`;
  });
}

/** Why the call of a question answered after a restart failed: the call's report. */
export const QUESTION_LOST_TEXT =
  "The harness restarted, or the conversation moved to another instance, while the call waited for the user's answer: the MCP server's request could not go on, so the call failed.";

/** What the model is told of it, with the answer the user gave. */
export function lostQuestionText(data: ElicitationData, answer: ElicitationAnswer): string {
  const action =
    answer.action === 'accept'
      ? `accepted with ${JSON.stringify(answer.content ?? {})}`
      : answer.action === 'decline'
        ? 'declined'
        : 'canceled';
  return `[The tool call ${data.tool} (MCP server "${data.server}") asked the user: "${data.message}". The user ${action}. ${QUESTION_LOST_TEXT} Call the tool again if it is still needed.]`;
}
