/** `tiny-harness send`'s exit codes, kept apart from the client so that `--help` loads none of it. */
export const SEND_EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  noReply: 3,
  awaitingApproval: 5,
  commandFailed: 6,
  moved: 7,
} as const;

/** What each exit code means, as `--help` and docs/clients.md list them. */
export const SEND_EXIT_MEANINGS: Record<keyof typeof SEND_EXIT, string> = {
  ok: 'the reply came',
  failed: 'the request failed (unreachable, refused), or the task (or a sub-task waited for) failed',
  usage: 'bad usage: an unknown flag, a missing URL, no text to send',
  noReply: "the turn ended without the model's reply (the model failed, the server stopped)",
  awaitingApproval:
    "the turn waits for you: a tool call to approve (/approve or /deny it), or a tool's question to answer",
  commandFailed: 'the command failed (bad arguments, an unknown model): its reply says why',
  moved: 'with --if-generation: the task has moved past that generation, and nothing was sent',
};
