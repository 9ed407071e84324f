import { TaskEngine, type EngineTaskStore } from '../../src/runtime/engine.js';
import { LocalCoordination } from '../../src/runtime/local-coordination.js';
import type { SubtaskRecords } from '../../src/runtime/task-state.js';

/** A store for tests whose engine never writes a task (turns only). */
const noStore: EngineTaskStore = {
  save: () => Promise.reject(new Error('this test stores no task')),
  load: () => Promise.reject(new Error('this test stores no task')),
  modify: () => Promise.reject(new Error('this test stores no task')),
  awaitWritesUnderWay: () => Promise.resolve(),
};

/** A task engine of one process, on `store` (by default one that stores nothing), creating sub-tasks in `subtasks`. */
export function localEngine(
  store: EngineTaskStore = noStore,
  onError: (error: unknown) => void = () => {},
  subtasks?: SubtaskRecords,
): TaskEngine {
  return new TaskEngine({ coordination: new LocalCoordination(), store, subtasks, onError });
}
