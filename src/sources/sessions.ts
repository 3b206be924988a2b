// Pages of ListSessionsV2 for one time window, as batches of raw records. Guards against the
// failure modes public clients have looped on (API-FACTS, "Pagination"): a cursor that comes
// back again, pages that bring nothing new (a cursor loop of any length: every id seen in the
// window is remembered), and a hard ceiling on pages per window.
import { ApiError } from "../api/errors.js";
import type { ControlPlaneApi } from "../api/control-plane.js";
import type { SplitElement } from "../api/json-stream.js";
import type { RetryBudget } from "../api/retry.js";
import { FatalError } from "../util/errors.js";
import type { Logger } from "../util/logger.js";
import { IdHashSet } from "./id-set.js";
import { scanTopLevelId } from "./record-id.js";
import type { Window } from "./windows.js";

/** A record as received: its exact text and, when it is JSON, the parsed value. */
export interface RawRecord {
  /** The record's text; base64 of its bytes when they are not UTF-8 (see parseError). */
  text: string;
  value: unknown;
  /** Set when the record cannot be read: the reason of its dead letter. */
  parseError?: string;
  /** For a record that cannot be read: its `id` member, when its bytes still show one. */
  scannedId?: string | undefined;
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
  /** Pages one pass over the window may take (default 10000); past it, TOO_MANY_PAGES. */
  maxPagesPerWindow?: number | undefined;
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
export const DEFAULT_MAX_PAGES_PER_WINDOW = 10_000;

export class PagingError extends FatalError {}

/** A page element as a record: parsed, or with the reason it cannot be (a dead letter). */
export function parseRecord(element: SplitElement): RawRecord {
  if (typeof element !== "string") {
    if (element.problem === "invalid-utf8") {
      return {
        text: element.bytes.toString("base64"),
        value: undefined,
        parseError: `invalid UTF-8, raw is base64 of the record's ${element.size} bytes`,
        scannedId: scanTopLevelId(element.bytes),
      };
    }
    return {
      text: element.bytes.toString("utf8"),
      value: undefined,
      parseError: `record of ${element.size} bytes is larger than SESSIONHOUSE_MAX_RECORD_BYTES, raw is its first ${element.bytes.length} bytes`,
      scannedId: scanTopLevelId(element.bytes),
    };
  }
  try {
    return { text: element, value: JSON.parse(element) as unknown };
  } catch (err) {
    return {
      text: element,
      value: undefined,
      parseError: `not JSON: ${(err as Error).message}`,
      scannedId: scanTopLevelId(Buffer.from(element, "utf8")),
    };
  }
}

/** The session id a record names: its parsed `id`, or the one found in its bytes; else "". */
export function recordIdOf(r: RawRecord): string {
  return idOf(r) ?? r.scannedId ?? "";
}

/** The record's `id` when it has one that is a string. */
export function idOf(r: RawRecord): string | undefined {
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
  const maxPages = options.maxPagesPerWindow ?? DEFAULT_MAX_PAGES_PER_WINDOW;
  let restarts = 0;
  let pages = 0;
  for (;;) {
    const seenCursors = new Set<string>();
    // Every id of this pass over the window, tagged with the page it first came on: a page
    // whose ids all came on earlier pages brings nothing new, whatever the length of the loop
    // that brought it back. A page read again after a retry keeps its own tag, so it is new.
    const seen = new IdHashSet();
    let cursor: string | undefined;
    let stalled = 0;
    let passPages = 0;
    try {
      for (;;) {
        pages++;
        passPages++;
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
              if (id === undefined || seen.add(id, passPages) === passPages)
                fresh++;
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
              count: 0n,
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
        if (stalled >= options.maxStalledPages) {
          throw new PagingError(
            "PAGES_STALLED",
            `ListSessionsV2 is looping for ${describe(window)}: page ${passPages} and the ${stalled - 1} before it held only sessions already returned by earlier pages of the window, yet each came with a new cursor`,
            {
              hint: "the service's cursor is going round in circles: nothing past this window was checkpointed; retry later, or report it to the vendor",
            },
          );
        }
        if (passPages >= maxPages) {
          throw new PagingError(
            "TOO_MANY_PAGES",
            `ListSessionsV2 still had a next page for ${describe(window)} after ${passPages} pages, the most one window may take (SESSIONHOUSE_MAX_PAGES_PER_WINDOW)`,
            {
              hint: "if the window really holds that many sessions, raise SESSIONHOUSE_MAX_PAGES_PER_WINDOW or SESSIONHOUSE_PAGE_SIZE, or set a smaller SESSIONHOUSE_WINDOW; otherwise the service's paging does not end: report it to the vendor",
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
