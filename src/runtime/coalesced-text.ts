/**
 * Collects the text deltas of a model reply and hands them on merged: the deltas that arrive
 * together (a burst in one network read, or a backlog while the process was busy) go out as
 * one piece, on the next turn of the event loop.
 *
 * Why: each piece becomes an artifact update, which the engine stores before any stream sends
 * it, and Node's HTTP response sends nothing until that whole chain of callbacks ends. Published
 * one by one, a burst of 200 deltas made the first token wait for the last. The first delta
 * of a quiet stream still goes out alone, a moment (one `setImmediate`) after it arrived.
 */
export class CoalescedText {
  private pending = '';
  private scheduled = false;

  /** @param emit receives each merged piece, never an empty one. */
  constructor(private readonly emit: (text: string) => void) {}

  push(delta: string): void {
    if (!delta) return;
    this.pending += delta;
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Hands on what is waiting now: call it when a reply fails, before the final status. */
  flush(): void {
    const text = this.take();
    if (text) this.emit(text);
  }

  /**
   * Returns what is waiting instead of handing it on (`''` when nothing is): at the end of a
   * reply, so that its last piece can go out in the update that closes the artifact.
   */
  take(): string {
    this.scheduled = false;
    const text = this.pending;
    this.pending = '';
    return text;
  }
}
