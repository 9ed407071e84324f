import { monitorEventLoopDelay } from 'node:perf_hooks';

/** How often the loop's delay is sampled (Node's timer behind `monitorEventLoopDelay`). */
const RESOLUTION_MS = 10;
/** The window the delay is averaged over: short enough that refusals follow the lag within a moment. */
const WINDOW_MS = 250;

/**
 * How late the event loop runs what is ready: the mean delay of its timer samples over the last
 * window, less the sampling period, as `@fastify/under-pressure` reads it. When every loop
 * iteration is long (more I/O and callbacks than the CPU gets through) the mean is about their
 * length; one long garbage collection among many short iterations moves it little.
 *
 * The histogram is never reset: a reset forgets when the last sample was taken, so the first
 * sample after it is dropped, and when iterations last longer than a window that is every
 * sample (measured under a flood: windows of 1.3 s with no sample at all, read as no delay). The
 * window's mean is the difference of the running totals instead.
 */
export class EventLoopDelay {
  private readonly histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  private readonly timer: NodeJS.Timeout;
  private lastMs = 0;
  private totals = { count: 0, sumMs: 0 };

  constructor(windowMs = WINDOW_MS) {
    this.histogram.enable();
    this.timer = setInterval(() => this.roll(), windowMs).unref();
  }

  /** The mean delay over the last window, in milliseconds; 0 before the first window ends. */
  get ms(): number {
    return this.lastMs;
  }

  /** Stops sampling (the harness stops). */
  stop(): void {
    clearInterval(this.timer);
    this.histogram.disable();
  }

  private roll(): void {
    const count = this.histogram.count;
    const sumMs = count > 0 ? (this.histogram.mean * count) / 1e6 : 0;
    const samples = count - this.totals.count;
    this.lastMs = samples > 0 ? Math.max(0, (sumMs - this.totals.sumMs) / samples - RESOLUTION_MS) : this.lastMs;
    this.totals = { count, sumMs };
    if (process.env.DEBUG_LAG) console.log(`lag ${this.lastMs.toFixed(0)}`);
  }
}
