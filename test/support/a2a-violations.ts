/**
 * Where the A2A 1.0 checks of the test clients report what they find. A violation fails the
 * call that received it, with an error naming the field and the rule; and, in case a test
 * expected that call to fail anyway or swallowed its error, every violation is also kept and
 * printed when the process exits, which then exits non-zero (the test runner reports the file
 * as failed).
 */
const seen: string[] = [];
let watching = false;

/** Thrown into the call whose answer broke the specification. */
export class A2AViolation extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`the answer is not valid A2A 1.0:\n  ${problems.join('\n  ')}`);
    this.name = 'A2AViolation';
    this.stack = `${this.name}: ${this.message}`; // where the check ran says nothing about the fault
  }
}

/** Records the problems of one answer and returns the error to fail its call with. */
export function violation(problems: readonly string[]): A2AViolation {
  if (!watching) process.once('exit', printAndFail);
  watching = true;
  seen.push(...problems);
  return new A2AViolation(problems);
}

/** The violations seen so far in this process (for the checks' own tests). */
export function seenViolations(): readonly string[] {
  return seen;
}

/** Forgets what was seen: for the checks' own tests, which provoke violations on purpose. */
export function forgetViolations(): void {
  seen.length = 0;
}

function printAndFail(): void {
  if (seen.length === 0) return;
  process.stderr.write(`\nA2A 1.0 violations received by the test clients:\n  ${seen.join('\n  ')}\n`);
  process.exitCode = 1;
}
