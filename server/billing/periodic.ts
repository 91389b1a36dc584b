/**
 * Runs a background pass now and then every `intervalMs` after the previous one ends, and remembers every
 * pass in flight (timer-driven or called directly) so that `stop()` can wait for them before the store closes.
 */
export class Periodic<T> {
  private readonly passes = new Set<Promise<T>>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  /** Bumped by every start(), so a loop from before a stop() never re-arms alongside a newer one. */
  private generation = 0;

  constructor(private readonly onError: (err: unknown) => void) {}

  /** Remembers a pass until it settles; returns it unchanged. */
  track(pass: Promise<T>): Promise<T> {
    this.passes.add(pass);
    const forget = () => this.passes.delete(pass);
    pass.then(forget, forget);
    return pass;
  }

  start(intervalMs: number, run: () => Promise<T>): void {
    if (!Number.isFinite(intervalMs) || intervalMs <= 0) throw new RangeError("intervalMs must be positive");
    if (!this.stopped) return;
    this.stopped = false;
    const generation = ++this.generation;
    const tick = async () => {
      this.timer = undefined;
      try {
        await run();
      } catch (err) {
        this.onError(err);
      }
      // The timer must not keep a process (a CLI, a test) alive on its own.
      if (!this.stopped && generation === this.generation) this.timer = setTimeout(tick, intervalMs).unref();
    };
    this.timer = setTimeout(tick, 0).unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await Promise.allSettled([...this.passes]);
  }
}
