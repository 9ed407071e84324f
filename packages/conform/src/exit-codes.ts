/** `tiny-harness conform`'s exit codes, kept apart from the kit so that `--help` loads none of it. */
export const CONFORM_EXIT = { ok: 0, failed: 1, usage: 2, unreachable: 3, undeclared: 4, cardRefused: 5 } as const;

/** What each exit code means, as `--help` and docs/conformance.md list them. */
export const CONFORM_EXIT_MEANINGS: Record<keyof typeof CONFORM_EXIT, string> = {
  ok: 'nothing failed',
  failed: 'a check failed',
  usage: 'bad usage',
  unreachable: 'the server cannot be asked: it does not answer, or it wants a token (--header)',
  undeclared: 'its card does not declare the Commands extension',
  cardRefused: "its card's signature does not verify with the keys given (--card-key)",
};
