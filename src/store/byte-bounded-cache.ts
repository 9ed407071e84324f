import { LRUCache } from 'lru-cache';

/** What a cache entry and its bookkeeping cost besides the key's text and the value. */
const ENTRY_BYTES = 64;

/**
 * A least-recently-used cache bounded by the bytes its entries hold, not by their count: a
 * count says nothing about memory when one task holds a few hundred bytes and the next 4 MB
 * (500 tasks of 4 MB each filled a 4 GB heap). `valueBytes` weighs a value from figures it
 * already has (the length of the text it decoded), so a put costs no walk over the value; the
 * key and the entry itself are added here. Putting a key again weighs its value again, which
 * is how a value that grew in place is weighed anew.
 *
 * An entry heavier than the whole bound is not kept, and putting one drops the key's older
 * entry (lru-cache's `maxEntrySize` is its `maxSize` by default). A bound of 0 keeps nothing:
 * lru-cache needs a positive bound, and every entry weighs at least `ENTRY_BYTES`, more than 1.
 * lru-cache treats a value of `undefined` as a deletion.
 */
export function byteBoundedCache<V extends NonNullable<unknown>>(
  maxBytes: number,
  valueBytes: (value: V) => number,
): LRUCache<string, V> {
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0)
    throw new RangeError(`a cache bound must be a whole number of bytes >= 0, not ${maxBytes}`);
  return new LRUCache<string, V>({
    maxSize: Math.max(1, maxBytes),
    sizeCalculation: (value, key) => Math.max(0, Math.ceil(valueBytes(value))) + 2 * key.length + ENTRY_BYTES,
  });
}
