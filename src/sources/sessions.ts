// Pages of ListSessionsV2 for one time window, as batches of raw records. Guards against the
// failure modes public clients have looped on (API-FACTS, "Pagination"): a cursor that comes
// back again, and pages that bring nothing new.
import { ApiError } from "../api/errors.js";
import type { ControlPlaneApi } from "../api/control-plane.js";
import type { RetryBudget } from "../api/retry.js";
import { FatalError } from "../util/errors.js";
import type { Logger } from "../util/logger.js";
import type { Window } from "./windows.js";

/** A record as received: its exact text and, when it is JSON, the parsed value. */
export interface RawRecord {
  text: string;
  value: unknown;
  /** Set when the text is not JSON. */
  parseError?: string;
}

export interface SessionBatch {
  window: Window;
  /** 1-based page number within the window. */
  page: number;
  records: RawRecord[];
  /** True on the last batch of a page. */
  endOfPage: boolean;
}

export interface WindowPagingOptions {
  pageSize: number;
  batchSize: number;
  maxStalledPages: number;
  signal?: AbortSignal | undefined;
  budget?: RetryBudget | undefined;
  logger?: Logger | undefined;
  /**
   * Restarts of a window after the service refused an expired cursor (default 10). Each also
   * takes one retry from the run's budget: a restart re-reads the window from its start.
   */
  maxCursorRestarts?: number;
}

export const DEFAULT_MAX_CURSOR_RESTARTS = 10;

export class PagingError extends FatalError {}

export function parseRecord(text: string): RawRecord {
  try {
    return { text, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { text, value: undefined, parseError: (err as Error).message };
  }
}

/** FNV-1a of an id, folded to 30 bits (a V8 small integer). */
function idKey(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++)
    h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h & 0x3fffffff;
}

function idOf(r: RawRecord): string | undefined {
  const v = r.value as { id?: unknown } | undefined;
  return typeof v === "object" && v !== null && typeof v.id === "string"
    ? v.id
    : undefined;
}

/**
 * The service's answer to a cursor it no longer accepts. No Connect code of its own exists for
 * it (API-FACTS), so this is `invalid_argument` naming the cursor, and only for a request that
 * sent one.
 */
function isExpiredCursor(err: unknown): err is ApiError {
  return (
    err instanceof ApiError &&
    err.code === "invalid_argument" &&
    /cursor/i.test(err.detail)
  );
}

export async function* sessionWindowBatches(
  api: ControlPlaneApi,
  window: Window,
  options: WindowPagingOptions,
): AsyncGenerator<SessionBatch, { pages: number }> {
  let restarts = 0;
  let pages = 0;
  for (;;) {
    const seenCursors = new Set<string>();
    // Ids of the previous and the current page: enough to tell a page that brings nothing new,
    // and bounded by the page size whatever the window holds (a cycle over more pages repeats a
    // cursor, which is caught below). Kept as small-integer hashes, which the garbage collector
    // does not trace; a collision can only make a page look less new, and a page is "nothing
    // new" only when every one of its ids was seen.
    let previousIds = new Set<number>();
    let seenIds = new Set<number>();
    let cursor: string | undefined;
    let stalled = 0;
    try {
      for (;;) {
        pages++;
        const page = api.sessionsPage(
          {
            startMs: window.startMs,
            endMs: window.endMs,
            limit: options.pageSize,
            cursor,
          },
          {
            batchSize: options.batchSize,
            signal: options.signal,
            budget: options.budget,
          },
        );
        let fresh = 0;
        let received = 0;
        let next = await page.next();
        try {
          while (!next.done) {
            const records = next.value.map(parseRecord);
            received += records.length;
            for (const r of records) {
              const id = idOf(r);
              const key = id === undefined ? undefined : idKey(id);
              if (
                key === undefined ||
                !(seenIds.has(key) || previousIds.has(key))
              )
                fresh++;
              if (key !== undefined) seenIds.add(key);
            }
            const following = await page.next();
            yield {
              window,
              page: pages,
              records,
              endOfPage: following.done === true,
            };
            next = following;
          }
        } finally {
          // A consumer that stops in the middle of a page (a failed insert, an abort) must not
          // leave the response body, and the connection under it, open.
          if (!next.done)
            await page.return({
              after: "",
              before: "",
              nextCursor: "",
              count: 0,
            });
        }
        if (received === 0)
          yield { window, page: pages, records: [], endOfPage: true };
        const nextCursor = next.value.nextCursor;
        if (!nextCursor) return { pages };
        if (seenCursors.has(nextCursor) || nextCursor === cursor) {
          throw new PagingError(
            "CURSOR_REPEATED",
            `ListSessionsV2 returned a cursor it had already returned for ${describe(window)}`,
            {
              hint: "the service's paging is looping; report it to the vendor and retry later, or use a smaller SESSIONHOUSE_WINDOW",
            },
          );
        }
        stalled = fresh === 0 ? stalled + 1 : 0;
        previousIds = seenIds;
        seenIds = new Set<number>();
        if (stalled >= options.maxStalledPages) {
          throw new PagingError(
            "PAGES_STALLED",
            `ListSessionsV2 kept returning pages with nothing new for ${describe(window)} (${pages} pages)`,
            {
              hint: "the service's paging is not advancing; retry later, or report it to the vendor",
            },
          );
        }
        seenCursors.add(nextCursor);
        cursor = nextCursor;
      }
    } catch (err) {
      if (cursor === undefined || !isExpiredCursor(err)) throw err;
      const max = options.maxCursorRestarts ?? DEFAULT_MAX_CURSOR_RESTARTS;
      if (restarts >= max || (options.budget && !options.budget.take())) {
        throw new PagingError(
          "CURSOR_EXPIRED",
          `ListSessionsV2 refused its own cursor for ${describe(window)} again after ${restarts} restarts of the window (${err.detail})`,
          {
            cause: err,
            hint: "the window takes longer to page than the service keeps a cursor: set a smaller SESSIONHOUSE_WINDOW or a larger SESSIONHOUSE_PAGE_SIZE; the next run resumes from the checkpoint",
          },
        );
      }
      restarts++;
      // What was already read stays stored: rows are idempotent, and the window is read again.
      options.logger?.warn(
        { window: describe(window), restarts, pages },
        "cursor refused by the service, restarting the window",
      );
    }
  }
}

export function describe(w: Window): string {
  return `[${new Date(w.startMs).toISOString()}, ${new Date(w.endMs).toISOString()})`;
}
