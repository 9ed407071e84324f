import { getEventListeners, setMaxListeners } from 'node:events';
import {
  DefaultExecutionEventBus,
  resolveUserScope,
  type AgentExecutionEvent,
  type ExecutionEventBus,
  type ExecutionEventBusManager,
  type OwnerResolver,
  type ServerCallContext,
} from '@a2a-js/sdk/server';
import type { Coordination } from './coordination.js';

/**
 * The live event buses of tasks on this instance, as the SDK's handler and the harness's
 * streams use them, joined to the other instances through `Coordination`: an event published
 * here is handed on to them, and their events for a task followed here are delivered to its
 * buses here. A task is followed while it has a bus here or someone `watch`es it (a turn from
 * its reservation on, so that nothing published elsewhere between the reservation and the
 * SDK's first bus is missed). Buses are kept per caller scope, as the SDK's manager does.
 */
export class TaskBuses implements ExecutionEventBusManager {
  private readonly scoped = new Map<string, Map<string, TaskBus>>();
  private readonly follows = new Map<string, Follow>();

  constructor(
    private readonly coordination: Coordination,
    /** Told when following a task's events from other instances could not begin. */
    private readonly onError: (error: unknown, taskId: string) => void,
    /** Whether a turn of the task runs here: its result manager stores what its bus carries. */
    private readonly turnHere: (taskId: string) => boolean = () => false,
    private readonly ownerResolver: OwnerResolver = resolveUserScope,
  ) {}

  createOrGetByTaskId(taskId: string, context?: ServerCallContext): ExecutionEventBus {
    const buses = this.bucket(context, true)!;
    let bus = buses.get(taskId);
    if (!bus) {
      bus = new TaskBus((event) => this.coordination.publish(taskId, event));
      buses.set(taskId, bus);
      this.follow(taskId).buses.add(bus);
    }
    return bus;
  }

  getByTaskId(taskId: string, context?: ServerCallContext): ExecutionEventBus | undefined {
    return this.bucket(context, false)?.get(taskId);
  }

  cleanupByTaskId(taskId: string, context?: ServerCallContext): void {
    const buses = this.bucket(context, false);
    const bus = buses?.get(taskId);
    if (!bus) return;
    bus.removeAllListeners();
    buses!.delete(taskId);
    if (buses!.size === 0) this.scoped.delete(this.scopeKey(context));
    const follow = this.follows.get(taskId);
    follow?.buses.delete(bus);
    if (follow) this.unfollowIfUnused(taskId, follow);
  }

  /**
   * Delivers an event of a task that may have no bus here (a command reply, a note) to every
   * bus of the task here; the store handed it to the other instances with the write that stored it.
   */
  deliverHere(taskId: string, event: AgentExecutionEvent): void {
    this.deliverStored(taskId, event, this.follows.get(taskId)?.buses ?? new Set());
  }

  /** An event stored already, to the task's buses here; a turn here stores it again, handing nothing on. */
  private deliverStored(taskId: string, event: AgentExecutionEvent, buses: Set<TaskBus>): void {
    if (buses.size === 0) return;
    if (this.turnHere(taskId)) this.coordination.passedThrough(taskId);
    for (const bus of buses) bus.deliver(event);
  }

  /**
   * Drops the task's bus when nothing listens to it and no turn here is starting or running: a
   * bus of an idle task serves only its listeners, and the next one or the next turn makes a new one.
   */
  releaseIfUnused(taskId: string, context: ServerCallContext | undefined, busyHere: (taskId: string) => boolean): void {
    const bus = this.bucket(context, false)?.get(taskId);
    if (!bus || busyHere(taskId)) return;
    if (getEventListeners(bus, 'event').length > 0 || getEventListeners(bus, 'finished').length > 0) return;
    this.cleanupByTaskId(taskId, context);
  }

  /**
   * Follows the task's events from other instances until the returned function is called;
   * resolves once following has begun, so that an event published elsewhere afterwards is seen.
   */
  async watch(taskId: string): Promise<() => void> {
    const follow = this.follow(taskId);
    follow.watchers += 1;
    await follow.started;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      follow.watchers -= 1;
      this.unfollowIfUnused(taskId, follow);
    };
  }

  private follow(taskId: string): Follow {
    let follow = this.follows.get(taskId);
    if (!follow) {
      const buses = new Set<TaskBus>();
      const started = this.coordination
        .follow(taskId, (event) => this.deliverStored(taskId, event, buses))
        .catch((error: unknown) => {
          this.onError(error, taskId);
          return () => undefined;
        });
      follow = { buses, watchers: 0, started: started.then(() => undefined), stop: started };
      this.follows.set(taskId, follow);
    }
    return follow;
  }

  private unfollowIfUnused(taskId: string, follow: Follow): void {
    if (follow.watchers > 0 || follow.buses.size > 0 || this.follows.get(taskId) !== follow) return;
    this.follows.delete(taskId);
    void follow.stop.then((stop) => stop());
  }

  private bucket(context: ServerCallContext | undefined, create: boolean): Map<string, TaskBus> | undefined {
    const key = this.scopeKey(context);
    let buses = this.scoped.get(key);
    if (!buses && create) this.scoped.set(key, (buses = new Map()));
    return buses;
  }

  private scopeKey(context: ServerCallContext | undefined): string {
    return context ? `${context.tenant ?? ''}\u0000${this.ownerResolver(context)}` : '';
  }
}

interface Follow {
  /** The task's buses here, in every scope. */
  buses: Set<TaskBus>;
  /** Watches not yet ended. */
  watchers: number;
  started: Promise<void>;
  stop: Promise<() => void>;
}

/**
 * A bus whose own events are handed on to the other instances, and on which theirs are delivered.
 * Every stream open on the task listens to it, and nothing bounds how many clients follow one
 * task: Node's leak warning (at 11 listeners) would count followers, not leaks. What bounds the
 * listeners is that each stream takes its own off when it ends or its client goes away
 * (`task-follower.ts`, counted in test/runtime/client-gone.test.ts).
 */
class TaskBus extends DefaultExecutionEventBus {
  constructor(private readonly handOn: (event: AgentExecutionEvent) => void) {
    super();
    setMaxListeners(0, this);
  }

  override publish(event: AgentExecutionEvent): void {
    super.publish(event);
    this.handOn(event);
  }

  /** An event from elsewhere: to the listeners here only. */
  deliver(event: AgentExecutionEvent): void {
    super.publish(event);
  }
}
