/**
 * A least-recently-used map bounded by the bytes its entries hold, not by their count: a
 * count says nothing about memory when one task holds a few hundred bytes and the next
 * 4 MB (500 tasks of 4 MB each filled a 4 GB heap). The caller says what each value weighs
 * when it puts it, from figures it already has (the length of the text it decoded), so a
 * put costs no walk over the value; the key and the entry itself are added here.
 *
 * An entry heavier than the whole bound is not kept. Putting a key again replaces its entry
 * and its weight, which is how a value that grew in place is weighed again.
 */

/** What a map entry and its bookkeeping cost besides the key's text and the value. */
const ENTRY_BYTES = 64;

export class ByteLru<V> {
  private readonly entries = new Map<string, { value: V; bytes: number }>();
  private held = 0;

  /** @param maxBytes the most the entries may weigh together; 0 keeps nothing. */
  constructor(readonly maxBytes: number) {
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 0)
      throw new RangeError(`a cache bound must be a whole number of bytes >= 0, not ${maxBytes}`);
  }

  /** How many entries are kept. */
  get size(): number {
    return this.entries.size;
  }

  /** What the kept entries weigh together, never more than `maxBytes`. */
  get bytes(): number {
    return this.held;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** The value, marked as the most recently used. */
  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /** The value without changing the recency order (for a scan that should not churn it). */
  peek(key: string): V | undefined {
    return this.entries.get(key)?.value;
  }

  /**
   * Keeps the value as the most recently used, dropping the least recently used entries until
   * everything fits. Returns false, keeping nothing under the key, when the value alone is
   * heavier than the bound.
   */
  set(key: string, value: V, valueBytes: number): boolean {
    this.delete(key);
    const bytes = Math.max(0, valueBytes) + 2 * key.length + ENTRY_BYTES;
    if (bytes > this.maxBytes) return false;
    this.entries.set(key, { value, bytes });
    this.held += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.held <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.held -= entry.bytes;
    }
    return true;
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.held -= entry.bytes;
  }

  clear(): void {
    this.entries.clear();
    this.held = 0;
  }
}
