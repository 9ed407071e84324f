/**
 * The answers to a tool call waiting for approval (CMD-33) as the clients offer them: the
 * terminal chat's keys and the web page's buttons, labelled alike (both import this). Each is
 * the command it sends on the wire, so any client can give the same answers.
 */
import { APPROVE_COMMAND, DENY_COMMAND } from './wire.js';

/** One answer to a call waiting for approval, as a client offers it (`APPROVAL_ANSWERS`). */
export interface ApprovalAnswer {
  /** The chat's key for it. */
  key: string;
  /** What the chat shows after the key, and the page on its button. */
  label: string;
  /** Whether a reason for the model is asked for (optional) before the command is sent. */
  asksReason: boolean;
  /** The command sent on the wire: any client can give the same answer. */
  command(callId: string, reason?: string): string;
}

/** The three answers to a waiting call, in the order the chat and the page offer them. */
export const APPROVAL_ANSWERS: readonly ApprovalAnswer[] = [
  { key: 'y', label: 'yes', asksReason: false, command: (id) => `/${APPROVE_COMMAND} ${id}` },
  {
    key: 'a',
    label: 'always for this conversation',
    asksReason: false,
    command: (id) => `/${APPROVE_COMMAND} always ${id}`,
  },
  {
    key: 'n',
    label: 'no',
    asksReason: true,
    command: (id, reason = '') => `/${DENY_COMMAND} ${id}${reason.trim() ? ` ${reason.trim()}` : ''}`,
  },
];
