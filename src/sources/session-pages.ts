// Pages of ListSessionsV2 for one time window, as batches of raw records. Guards against the
// ways a cursor-paged listing can loop: a cursor that comes back again, pages that bring nothing
// new (a cursor loop of any length: every id seen in the window is remembered), and a hard
// ceiling on pages per window. A window whose cursor the service refuses is read again.
import { ApiError } from "../api/errors.js";
import type { ControlPlaneApi } from "../api/control-plane.js";
import type { SplitElement } from "../api/json-stream.js";
import type { RetryBudget } from "../api/retry.js";
import { ListingCounts } from "../api/answers.js";
import type { ListMetadata } from "../api/schemas/common.js";
import {
  scanSession,
  type ScanFinding,
  type SessionScan,
} from "../api/schemas/session-scan.js";
import { FatalError } from "../util/errors.js";
import type { Logger } from "../util/logger.js";
import { IdHashSet } from "./id-set.js";
import { scanTopLevelId } from "./record-id.js";
import type { Window } from "./windows.js";

/**
 * A record as received: its exact text, what a scan of its bytes found (see scanSession), and,
 * when it is JSON, the parsed value — the text decoded and parsed on first use, so a record the
 * scan accepted is never decoded nor parsed in JavaScript (the engine reads its bytes).
 */
export interface RawRecord {
  /** The record's text; base64 of its bytes when they are not UTF-8 (see parseError). */
  readonly text: string;
  /** The record's exact bytes, when it arrived as bytes of its own (UTF-8). */
  readonly bytes?: Buffer;
  /** The scan of the bytes; absent for a record that did not arrive as bytes of its own. */
  readonly scan?: SessionScan;
  readonly value: unknown;
  /** Set when the record cannot be read: the reason of its dead letter. */
  readonly parseError?: string | undefined;
  /** For a record that cannot be read: its `id` member, when its bytes still show one. */
  readonly scannedId?: string | undefined;
}

/** A record that arrived as UTF-8 bytes: scanned at once, decoded and parsed only when asked. */
class ReceivedBytes implements RawRecord {
  readonly bytes: Buffer;
  readonly scan: SessionScan;
  #text: string | undefined;
  #parsed = false;
  #value: unknown;
  #parseError: string | undefined;
  #scannedId: string | undefined;

  constructor(bytes: Buffer, scan: SessionScan) {
    this.bytes = bytes;
    this.scan = scan;
  }

  get text(): string {
    this.#text ??= this.bytes.toString("utf8");
    return this.#text;
  }

  get value(): unknown {
    this.#parse();
    return this.#value;
  }

  get parseError(): string | undefined {
    this.#parse();
    return this.#parseError;
  }

  get scannedId(): string | undefined {
    this.#parse();
    return this.#scannedId;
  }

  #parse(): void {
    if (this.#parsed) return;
    this.#parsed = true;
    try {
      this.#value = JSON.parse(this.text) as unknown;
    } catch (err) {
      this.#parseError = `not JSON: ${(err as Error).message}`;
      this.#scannedId = scanTopLevelId(this.bytes);
    }
  }
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

const DEFAULT_MAX_CURSOR_RESTARTS = 10;
const DEFAULT_MAX_PAGES_PER_WINDOW = 10_000;

export class PagingError extends FatalError {}

/** A page element as a record: its bytes scanned, or the reason it cannot be read (a dead letter). */
function parseRecord(element: SplitElement<ScanFinding>): RawRecord {
  if (Buffer.isBuffer(element))
    return new ReceivedBytes(element, scanSession(element));
  if ("value" in element)
    return new ReceivedBytes(element.bytes, element.value);
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

/** The session id a record names: its parsed `id`, or the one found in its bytes; else "". */
export function recordIdOf(r: RawRecord): string {
  return idOf(r) ?? r.scannedId ?? "";
}

/** The record's `id` when it has one that is a string. */
export function idOf(r: RawRecord): string | undefined {
  const scan = r.scan;
  if (scan !== undefined && "id" in scan) return scan.id;
  const v = r.value as { id?: unknown } | undefined;
  return typeof v === "object" && v !== null && typeof v.id === "string"
    ? v.id
    : undefined;
}

/**
 * The service's answer to a cursor it no longer accepts. No Connect code of its own exists for
 * it, so this is `invalid_argument` naming the cursor, and only for a request that sent one.
 */
export function isExpiredCursor(err: unknown): err is ApiError {
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
  const restarts = new CursorRestarts(window, options);
  let pages = 0;
  for (;;) {
    const pass = new WindowPass(window, options);
    const counts = new ListingCounts();
    try {
      for (;;) {
        pages++;
        pass.beginPage();
        const read = yield* readPage(api, window, options, pass, pages);
        counts.page(read.listMetadata, read.received);
        if (!read.nextCursor) {
          counts.report(options.logger, {
            operation: "ListSessionsV2",
            window: windowLabel(window),
          });
          return { pages };
        }
        pass.advance(read.nextCursor, read.fresh);
      }
    } catch (err) {
      restarts.restartAfter(err, pass.cursor, pages);
    }
  }
}

/** The metadata a page ends with, to close a page left in the middle. */
const CLOSED_PAGE: ListMetadata = {
  after: "",
  before: "",
  nextCursor: "",
  count: 0n,
};

/**
 * One page at `pass.cursor`, yielded batch by batch (an empty page as one empty batch); returns
 * its next cursor and how many of its records no earlier page of the pass brought.
 */
async function* readPage(
  api: ControlPlaneApi,
  window: Window,
  options: WindowPagingOptions,
  pass: WindowPass,
  pageNumber: number,
): AsyncGenerator<
  SessionBatch,
  {
    nextCursor: string;
    fresh: number;
    received: number;
    listMetadata: ListMetadata;
  }
> {
  const page = api.sessionsPage(
    {
      startMs: window.startMs,
      endMs: window.endMs,
      limit: options.pageSize,
      cursor: pass.cursor,
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
      fresh += pass.countFresh(records);
      const following = await page.next();
      const endOfPage = following.done === true;
      yield { window, page: pageNumber, records, endOfPage };
      next = following;
    }
  } finally {
    // A consumer that stops in the middle of a page (a failed insert, an abort) must not
    // leave the response body, and the connection under it, open.
    if (!next.done) await page.return(CLOSED_PAGE);
  }
  if (received === 0)
    yield { window, page: pageNumber, records: [], endOfPage: true };
  return {
    nextCursor: next.value.nextCursor,
    fresh,
    received,
    listMetadata: next.value,
  };
}

/**
 * One pass over a window, from its first page: the cursors and ids its pages brought, and the
 * checks that stop a pass going round in circles or never ending.
 */
class WindowPass {
  readonly #window: Window;
  readonly #maxStalledPages: number;
  readonly #maxPages: number;
  readonly #cursors = new Set<string>();
  // Every id of this pass over the window, tagged with the page it first came on: a page
  // whose ids all came on earlier pages brings nothing new, whatever the length of the loop
  // that brought it back. A page read again after a retry keeps its own tag, so it is new.
  readonly #seen = new IdHashSet();
  #stalled = 0;
  #pages = 0;
  /** The cursor of the page being read; undefined on the first page. */
  cursor: string | undefined;

  constructor(window: Window, options: WindowPagingOptions) {
    this.#window = window;
    this.#maxStalledPages = options.maxStalledPages;
    this.#maxPages = options.maxPagesPerWindow ?? DEFAULT_MAX_PAGES_PER_WINDOW;
  }

  beginPage(): void {
    this.#pages++;
  }

  /** Records of the current page that no earlier page brought (a record without an id is new). */
  countFresh(records: readonly RawRecord[]): number {
    let fresh = 0;
    for (const r of records) {
      const id = idOf(r);
      if (id === undefined || this.#seen.add(id, this.#pages) === this.#pages)
        fresh++;
    }
    return fresh;
  }

  /** Moves to the next page's cursor, or throws when the paging loops or does not end. */
  advance(nextCursor: string, fresh: number): void {
    if (this.#cursors.has(nextCursor) || nextCursor === this.cursor) {
      throw new PagingError(
        "CURSOR_REPEATED",
        `ListSessionsV2 returned a cursor it had already returned for ${windowLabel(this.#window)}`,
        {
          hint: "the service's paging is looping; report it to the vendor and retry later, or use a smaller SESSIONHOUSE_WINDOW",
        },
      );
    }
    this.#stalled = fresh === 0 ? this.#stalled + 1 : 0;
    if (this.#stalled >= this.#maxStalledPages) {
      throw new PagingError(
        "PAGES_STALLED",
        `ListSessionsV2 is looping for ${windowLabel(this.#window)}: page ${this.#pages} and the ${this.#stalled - 1} before it held only sessions already returned by earlier pages of the window, yet each came with a new cursor`,
        {
          hint: "the service's cursor is going round in circles: nothing past this window was checkpointed; retry later, or report it to the vendor",
        },
      );
    }
    if (this.#pages >= this.#maxPages) {
      throw new PagingError(
        "TOO_MANY_PAGES",
        `ListSessionsV2 still had a next page for ${windowLabel(this.#window)} after ${this.#pages} pages, the most one window may take (SESSIONHOUSE_MAX_PAGES_PER_WINDOW)`,
        {
          hint: "if the window really holds that many sessions, raise SESSIONHOUSE_MAX_PAGES_PER_WINDOW or SESSIONHOUSE_PAGE_SIZE, or set a smaller SESSIONHOUSE_WINDOW; otherwise the service's paging does not end: report it to the vendor",
        },
      );
    }
    this.#cursors.add(nextCursor);
    this.cursor = nextCursor;
  }
}

/**
 * When a window is read again from its start: after the service refused a cursor it gave,
 * at most `maxCursorRestarts` times, each taking a retry from the run's budget.
 */
class CursorRestarts {
  readonly #window: Window;
  readonly #options: WindowPagingOptions;
  #restarts = 0;

  constructor(window: Window, options: WindowPagingOptions) {
    this.#window = window;
    this.#options = options;
  }

  /** Returns when the window may be read again after `err`; throws otherwise. */
  restartAfter(err: unknown, cursor: string | undefined, pages: number): void {
    if (cursor === undefined || !isExpiredCursor(err)) throw err;
    const { budget, logger } = this.#options;
    const max = this.#options.maxCursorRestarts ?? DEFAULT_MAX_CURSOR_RESTARTS;
    const window = windowLabel(this.#window);
    if (this.#restarts >= max || (budget && !budget.take())) {
      throw new PagingError(
        "CURSOR_EXPIRED",
        `ListSessionsV2 refused its own cursor for ${window} again after ${this.#restarts} restarts of the window (${err.detail})`,
        {
          cause: err,
          hint: "the window takes longer to page than the service keeps a cursor: set a smaller SESSIONHOUSE_WINDOW or a larger SESSIONHOUSE_PAGE_SIZE; the next run resumes from the checkpoint",
        },
      );
    }
    this.#restarts++;
    // What was already read stays stored: rows are idempotent, and the window is read again.
    logger?.warn(
      { window, restarts: this.#restarts, pages },
      "cursor refused by the service, restarting the window",
    );
  }
}

/** A window as log lines and messages name it: `[start, end)` in ISO 8601, UTC. */
export function windowLabel(w: Window): string {
  return `[${new Date(w.startMs).toISOString()}, ${new Date(w.endMs).toISOString()})`;
}
