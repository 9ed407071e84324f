/**
 * The time bound of one MCP tool call (`toolTimeoutMs`), kept by the harness rather than the
 * MCP SDK, because it stops while the call's server waits for the user's answer to a question
 * (elicitation): the user's time is bounded on its own (`elicitationTimeoutMs`).
 */
export class CallClock {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private remainingMs: number;
  private startedAt = 0;
  private asking = 0;
  /** The bound passed: the call was aborted for it. */
  timedOut = false;

  constructor(
    timeoutMs: number,
    private readonly outer: AbortSignal,
  ) {
    this.remainingMs = timeoutMs;
    if (outer.aborted) this.controller.abort(outer.reason);
    else outer.addEventListener('abort', this.onOuterAbort, { once: true });
    this.run();
  }

  /** Aborts on the outer signal or when the bound passes. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Runs `wait` with the clock stopped (the time a person takes is not the tool's). */
  async stopped<T>(wait: () => Promise<T>): Promise<T> {
    if (this.asking++ === 0) this.pause();
    try {
      return await wait();
    } finally {
      if (--this.asking === 0 && !this.controller.signal.aborted) this.run();
    }
  }

  stop(): void {
    clearTimeout(this.timer);
    this.outer.removeEventListener('abort', this.onOuterAbort);
  }

  private readonly onOuterAbort = () => {
    this.stop();
    this.controller.abort(this.outer.reason);
  };

  private run(): void {
    this.startedAt = performance.now();
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort(new Error('the call timed out'));
    }, this.remainingMs);
  }

  private pause(): void {
    clearTimeout(this.timer);
    this.remainingMs = Math.max(0, this.remainingMs - (performance.now() - this.startedAt));
  }
}
