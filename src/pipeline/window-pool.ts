// Windows worked on side by side, finished in order: up to `concurrency` windows are fetched at
// once (a remote API makes every page wait for the server, so one window at a time leaves the
// connections idle), while what follows a window — its checkpoint above all — happens strictly
// in window order, once the window and every window before it are done. So a checkpoint never
// passes a window that is still being stored, whatever finishes first.

export interface WindowPoolOptions {
  /** Windows worked on at once (1: one after the other). */
  concurrency: number;
  /**
   * Windows started or finished but not yet passed to `done`, at most (default: no bound). A
   * result held in memory until its turn (a fetched answer) is bounded by it: behind a slow
   * window, no more than this many windows wait.
   */
  maxAhead?: number;
}

/**
 * Runs `work` for every window, at most `concurrency` at a time, in start order; calls `done`
 * for each window in order, as soon as it and all before it are done. After the first failure
 * (of `work` or of `done`) no window starts; the ones running finish, those of them that
 * continue the finished prefix are still passed to `done`, and the failure is thrown.
 */
export async function forEachWindowInOrder<W, T>(
  windows: readonly W[],
  options: WindowPoolOptions,
  work: (window: W) => Promise<T>,
  done: (window: W, result: T) => Promise<void>,
): Promise<void> {
  const finished = new Map<number, T>();
  let next = 0;
  let flushed = 0;
  let failure: { err: unknown } | undefined;
  let doneFailed = false;
  let flushing: Promise<void> = Promise.resolve();
  const maxAhead = Math.max(1, options.maxAhead ?? Infinity);
  // Workers waiting for the finished prefix to grow (or for a failure).
  let wake: (() => void)[] = [];
  const wakeAll = () => {
    const waiting = wake;
    wake = [];
    for (const resolve of waiting) resolve();
  };
  const fail = (err: unknown) => {
    failure ??= { err };
    wakeAll();
  };

  const flush = async () => {
    while (!doneFailed && finished.has(flushed)) {
      const result = finished.get(flushed) as T;
      finished.delete(flushed);
      await done(windows[flushed] as W, result);
      flushed++;
      wakeAll();
    }
  };

  const worker = async () => {
    while (failure === undefined && next < windows.length) {
      if (next - flushed >= maxAhead) {
        await new Promise<void>((resolve) => wake.push(resolve));
        continue;
      }
      const i = next++;
      try {
        finished.set(i, await work(windows[i] as W));
      } catch (err) {
        fail(err);
        return;
      }
      // One flush at a time, in order; a failing `done` stops every worker and every flush.
      flushing = flushing.then(flush).catch((err: unknown) => {
        doneFailed = true;
        fail(err);
      });
      await flushing;
    }
  };

  const workers = Math.max(1, Math.min(options.concurrency, windows.length));
  await Promise.all(Array.from({ length: workers }, worker));
  await flushing;
  if (failure !== undefined) throw failure.err;
}
