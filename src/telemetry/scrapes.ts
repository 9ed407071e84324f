/** What a scrape of `/metrics` answers with. */
export interface Scrape {
  contentType: string;
  text: string;
}

/** How long a rendering is served again: a Prometheus server scrapes every 15 s or so, and never sees it. */
const KEEP_MS = 1000;
/** Scrapes answered at once: a deployment's few Prometheus servers, with room to spare. */
const MAX_IN_PROGRESS = 8;

/**
 * The scrapes of `/metrics`, kept cheap however many come: the text is rendered once and served
 * again for a second (as `/readyz` keeps the store's answer), one rendering at a time whoever
 * asks, and at most {@link MAX_IN_PROGRESS} scrapes are answered at once, the others refused
 * (503) until one has been written. Rendered each time, fifty scrapers in parallel on the A2A port
 * raised the median turn from 25 to 476 ms.
 */
export class Scrapes {
  private kept: { at: number; scrape: Scrape } | undefined;
  private rendering: Promise<Scrape> | undefined;
  private answering = 0;

  constructor(
    private readonly render: () => Promise<Scrape>,
    private readonly keepMs = KEEP_MS,
    private readonly maxInProgress = MAX_IN_PROGRESS,
  ) {}

  /** Scrapes being answered now. */
  get inProgress(): number {
    return this.answering;
  }

  /** A place for one scrape, given back by `release` once its answer is written; undefined when every place is taken. */
  take(): { release: () => void } | undefined {
    if (this.answering >= this.maxInProgress) return undefined;
    this.answering++;
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        this.answering--;
      },
    };
  }

  /** The text to answer with: the one kept, or a rendering (shared with any scrape asking meanwhile). A failed rendering is not kept. */
  text(): Promise<Scrape> {
    const kept = this.kept;
    if (kept && performance.now() - kept.at < this.keepMs) return Promise.resolve(kept.scrape);
    return (this.rendering ??= this.render()
      .then((scrape) => {
        this.kept = { at: performance.now(), scrape };
        return scrape;
      })
      .finally(() => (this.rendering = undefined)));
  }
}
