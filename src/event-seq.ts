/**
 * Where a task or an event stands in its task's event log across instances (`task_events`):
 * an event's own seq, or the seq of the last event a task as read reflects. Kept beside the
 * objects, not in them, so that nothing of it reaches a client or a stored row.
 *
 * A follower sends the task as read, then skips each event at or below the task's mark: it is
 * in the task already (the store writes a task and appends its events in one transaction).
 */
const marks = new WeakMap<object, number>();

export function markSeq<T extends object>(target: T, seq: number): T {
  marks.set(target, seq);
  return target;
}

/** The mark, if the object has one: events published on this instance have none until stored. */
export function seqOf(target: object): number | undefined {
  return marks.get(target);
}

/** `to` a copy of `from` (a task decorated by a store wrapper): it keeps `from`'s mark. */
export function carrySeq<T extends object>(from: object, to: T): T {
  const seq = marks.get(from);
  if (seq !== undefined) marks.set(to, seq);
  return to;
}
