// The engine of the entity streams: it reads a stream as its spec says (stream-specs.ts)
// through the control plane's read operations (List*/Get* only), stores what it read with
// history (entity-history.ts) and moves the stream's checkpoint to the time of the read once
// everything it read is stored. What cannot be stored goes to dead_letters with the reason;
// records are never logged.
//
// A deletion is inferred only from a listing read whole whose every record was read, and only
// for ids it did not return: a dead-lettered record keeps its id (or, without a readable id,
// its whole listing, or the container it stood for) from being taken as gone, and so does an id
// listed twice with different content, whose records are dead letters and whose stored version
// stays. A parent (a user of user_devices, a resource of native_users, a user of users) whose
// read fails does not keep the others from being stored: its stored objects stay as they were,
// it is logged, named and kept in the parent ledger (parent-ledger.ts), where `windows list`,
// `status` and /readyz show it; the run fails after storing the others (PARENTS_FAILED), with
// no checkpoint, so the next run reads it again, unless an operator skipped every parent that
// failed (`windows skip STREAM --parent ID`).
import { ListingCounts } from "../api/answers.js";
import type { DirectoryList } from "../api/control-plane.js";
import { ApiError } from "../api/errors.js";
import { isBad, type EntityRecord } from "../sources/directory.js";
import { usersLastRead, writeCheckpoint } from "../warehouse/index.js";
import { storeRejected, type Answer, type Rejected } from "./answer.js";
import { isExpiredCursor } from "../sources/session-pages.js";
import { FatalError } from "../util/errors.js";
import type { JobContext } from "./context.js";
import {
  directorySpec,
  type DirectoryRead,
  type DirectorySpec,
} from "./stream-specs.js";
import { storeRead, storeVersions } from "./entity-history.js";
import type { EntityStream } from "./names.js";
import { ParentLedger, type ParentFailure } from "./parent-ledger.js";

export interface EntityStreamResult {
  stream: EntityStream;
  /** API calls made. */
  requests: number;
  /** Objects read. */
  read: number;
  /** New versions stored (first sightings and changes). */
  changed: number;
  /** Objects gone or marked for deletion. */
  gone: number;
  deadLetters: number;
  /** Parents whose read failed (their stored objects kept as they were). */
  failedParents: number;
}

/** Restarts of one listing after the service refused its cursor. */
const MAX_RESTARTS = 10;

/** The service refused a cursor it had handed out (expired): the listing starts again. */
class CursorRefused extends Error {
  constructor(override readonly cause: ApiError) {
    super("cursor refused");
  }
}

/** A listing that returns this many pages is stopped: its cursor does not end. */
const MAX_PAGES = 100_000;

/** Runs one stream once. */
export async function syncEntityStream(
  ctx: JobContext,
  stream: EntityStream,
  nowMs = Date.now(),
): Promise<EntityStreamResult> {
  const spec = directorySpec(stream);
  const run = new StreamRun(ctx, spec);
  const read = await run.read(nowMs);
  const records = run.agreed(read);
  const proves = (row: StoredObject) => read.provesGone(row);
  run.add(
    spec.history.kind === "versions"
      ? await storeVersions(ctx, records, proves, nowMs)
      : await storeRead(ctx, spec.history.tables, records, proves, nowMs),
  );
  await run.finish(nowMs, read);
  return run.result;
}

/**
 * What one run read: the answer of each parent ("" for a listing of everything) read to its
 * end, which parents failed, and what in their answers could not be read. In memory only: it
 * decides which stored objects the run proves gone (provesGone).
 */
export class Reading {
  readonly accepted: EntityRecord[] = [];
  readonly rejected: Rejected[] = [];
  readonly failures: ParentFailure[] = [];
  /** Parents whose read ended (a GetUser's not_found included). */
  readonly #complete = new Set<string>();
  /** Parents with a record whose id could not be read: nothing of theirs is proven gone. */
  readonly #opaque = new Set<string>();
  readonly #ids = new Set<string>();
  readonly #scopes: { column: string; value: string }[] = [];

  /**
   * @param parentColumn the content column that names a stored object's parent: undefined for
   *   a listing of everything (one parent, ""), "id" when each object is read by its own id
   *   (GetUser).
   */
  constructor(readonly parentColumn: string | undefined) {}

  /** The parents whose read ended. */
  get answered(): ReadonlySet<string> {
    return this.#complete;
  }

  /** Notes a parent's answer; one that does not prove itself whole proves nothing gone. */
  complete(parent: string, answer: Answer<EntityRecord>): void {
    if (answer.proof.kind === "whole") this.#complete.add(parent);
    this.accepted.push(...answer.accepted);
    for (const r of answer.rejected) {
      this.rejected.push(r);
      if (r.scope !== undefined) this.#scopes.push(r.scope);
      else if (r.recordId !== "") this.#ids.add(r.recordId);
      else this.#opaque.add(parent);
    }
  }

  /** Keeps `id` from being taken as gone by this read. */
  protect(id: string): void {
    this.#ids.add(id);
  }

  /** Whether this read proves the stored object `row` gone (it did not return it). */
  provesGone(row: StoredObject): boolean {
    const parent =
      this.parentColumn === undefined
        ? ""
        : this.parentColumn === "id"
          ? row.id
          : textOf(row[this.parentColumn]);
    if (!this.#complete.has(parent) || this.#opaque.has(parent)) return false;
    if (this.#ids.has(row.id)) return false;
    return !this.#scopes.some((s) => textOf(row[s.column]) === s.value);
  }
}

/** A stored object: its id and content columns. */
type StoredObject = Readonly<Record<string, unknown>> & { id: string };

function textOf(v: unknown): string {
  return typeof v === "string" ? v : "";
}

class StreamRun {
  readonly result: EntityStreamResult;
  readonly #letters: Rejected[] = [];

  constructor(
    readonly ctx: JobContext,
    readonly spec: DirectorySpec,
  ) {
    this.result = {
      stream: spec.stream,
      requests: 0,
      read: 0,
      changed: 0,
      gone: 0,
      deadLetters: 0,
      failedParents: 0,
    };
  }

  /** Reads the stream as its spec says. */
  async read(nowMs: number): Promise<Reading> {
    const r = this.spec.read;
    switch (r.kind) {
      case "listing": {
        const read = new Reading(undefined);
        read.complete(
          "",
          this.#normalize(await this.#listAll(r.operation, {}), ""),
        );
        return read;
      }
      case "perParent": {
        const read = new Reading(r.parentColumn);
        await this.#perParent(read, await r.parents(this.ctx.warehouse), (p) =>
          this.#listAll(r.operation, { [r.filter]: p }).then((items) =>
            this.#normalize(items, p),
          ),
        );
        return read;
      }
      case "get": {
        const read = new Reading("id");
        await this.#perParent(read, await this.#dueIds(r, nowMs), (id) =>
          this.#getUser(id),
        );
        return read;
      }
    }
  }

  /** Every parent read `usersConcurrency` at once; one that fails is noted, not fatal. */
  async #perParent(
    read: Reading,
    parents: readonly string[],
    readOne: (parent: string) => Promise<Answer<EntityRecord>>,
  ): Promise<void> {
    await pool(
      parents,
      this.ctx.config.streams.usersConcurrency,
      async (parent) => {
        try {
          read.complete(parent, await readOne(parent));
        } catch (err) {
          if (this.ctx.signal.aborted) throw err;
          const code =
            err instanceof ApiError || err instanceof FatalError
              ? err.code
              : "ERROR";
          const message = err instanceof Error ? err.message : "";
          read.failures.push({ parent, code, message });
          this.ctx.logger.warn(
            { parent, code, err: message },
            "parent could not be read; its stored objects are kept, it is read again on the next run",
          );
        }
      },
    );
  }

  /** The ids GetUser is due for: never read, or not since usersRefreshMs. */
  async #dueIds(
    r: Extract<DirectoryRead, { kind: "get" }>,
    nowMs: number,
  ): Promise<string[]> {
    const ids = await r.ids(this.ctx.warehouse);
    const last = await usersLastRead(this.ctx.warehouse);
    return ids.filter((id) => {
      const at = last.get(id);
      return (
        at === undefined || nowMs - at >= this.ctx.config.streams.usersRefreshMs
      );
    });
  }

  /** GetUser: the user, or nothing when the service does not know it (a disappearance). */
  async #getUser(id: string): Promise<Answer<EntityRecord>> {
    try {
      const user = await this.ctx.api.getUser(id, {
        signal: this.ctx.signal,
        budget: this.ctx.budget,
      });
      return this.#normalize(user === undefined ? [] : [user], id);
    } finally {
      this.#counted();
    }
  }

  /**
   * A parent's records read to the end of its listing (or its GetUser), secrets removed first,
   * normalized: an answer that proves itself whole, its rejected records apart.
   */
  #normalize(items: readonly unknown[], parent: string): Answer<EntityRecord> {
    const answer: Answer<EntityRecord> = {
      accepted: [],
      rejected: [],
      proof: { kind: "whole" },
    };
    const { secrets, read } = this.spec;
    const redact =
      secrets.kind === "allowlist" ? secrets.redact : (v: unknown) => v;
    for (const v of items)
      for (const r of read.normalize(redact(v), parent))
        if (isBad(r)) answer.rejected.push(r);
        else answer.accepted.push(r);
    return answer;
  }

  /**
   * The records to store: the good ones, each id once. An id read twice with different
   * content is a disagreement: its records become dead letters and its stored version stays.
   * The bad records are kept for dead_letters.
   */
  agreed(read: Reading): EntityRecord[] {
    const byId = new Map<string, EntityRecord[]>();
    this.#letters.push(...read.rejected);
    for (const r of read.accepted) {
      const same = byId.get(r.id);
      if (same) same.push(r);
      else byId.set(r.id, [r]);
    }
    const out: EntityRecord[] = [];
    for (const [id, versions] of byId) {
      const first = versions[0] as EntityRecord;
      const differ = versions.some(
        (v) =>
          v.contentHash !== first.contentHash || v.deleted !== first.deleted,
      );
      if (!differ) {
        out.push(first);
        continue;
      }
      read.protect(id);
      for (const v of versions)
        this.#letters.push({
          recordId: id,
          reason: `listed twice with different content (${versions.length} records of this id in one read): none is stored, the stored version is kept`,
          raw: v.raw,
        });
    }
    return out;
  }

  /**
   * Every element of a listing, page after page, until there is no next cursor. A cursor the
   * service refuses (expired) restarts the listing, at most MAX_RESTARTS times.
   */
  async #listAll(
    operation: DirectoryList,
    filters: Readonly<Record<string, string>>,
  ): Promise<unknown[]> {
    for (let restarts = 0; ; restarts++) {
      try {
        return await this.#listOnce(operation, filters);
      } catch (err) {
        if (!(err instanceof CursorRefused)) throw err;
        if (restarts >= MAX_RESTARTS || !this.ctx.budget.take())
          throw new FatalError(
            "CURSOR_EXPIRED",
            `${operation} refused its own cursor again after ${restarts} restarts of the listing (${err.cause.detail})`,
            {
              cause: err.cause,
              hint: "the listing is read again from its start on the next run",
            },
          );
        this.ctx.logger.warn(
          { operation, restarts: restarts + 1 },
          "cursor refused by the service, restarting the listing",
        );
      }
    }
  }

  /** One pass of a listing, every page of it: no order is assumed, none is asked for. */
  async #listOnce(
    operation: DirectoryList,
    filters: Readonly<Record<string, string>>,
  ): Promise<unknown[]> {
    const items: unknown[] = [];
    const seen = new Set<string>();
    const counts = new ListingCounts();
    let cursor = "";
    for (let pages = 0; ; pages++) {
      if (pages >= MAX_PAGES || seen.has(cursor))
        throw new FatalError(
          "CURSOR_CYCLE",
          `${operation} returned a cursor it had returned before, or more than ${MAX_PAGES} pages`,
          {
            hint: "the listing does not end; it is read again on the next run",
          },
        );
      seen.add(cursor);
      let page;
      try {
        page = await this.ctx.api.listPage(operation, filters, cursor, {
          signal: this.ctx.signal,
          budget: this.ctx.budget,
        });
      } catch (err) {
        if (cursor !== "" && isExpiredCursor(err)) throw new CursorRefused(err);
        throw err;
      } finally {
        this.#counted();
      }
      items.push(...page.items);
      counts.page(page.listMetadata, page.items.length);
      if (page.listMetadata.nextCursor === "") {
        counts.report(this.ctx.logger, { operation, ...filters });
        return items;
      }
      cursor = page.listMetadata.nextCursor;
    }
  }

  #counted(): void {
    this.result.requests++;
    this.ctx.counters.pages++;
  }

  add(r: { read: number; changed: number; gone: number }): void {
    this.result.read += r.read;
    this.result.changed += r.changed;
    this.result.gone += r.gone;
  }

  /**
   * Dead letters, then the parents that failed or answered again into the parent ledger, then
   * the checkpoint at the time of the read; when a parent failed that no operator skipped, no
   * checkpoint: the run fails naming them (PARENTS_FAILED) after everything else is stored.
   */
  async finish(nowMs: number, read: Reading): Promise<void> {
    const { stream } = this.spec;
    await storeRejected(this.ctx, this.#letters);
    this.result.deadLetters = this.#letters.length;
    const { failures } = read;
    this.result.failedParents = failures.length;
    const holding =
      this.spec.read.kind === "listing"
        ? failures
        : await (
            await ParentLedger.load(this.ctx, stream)
          ).record(this.ctx, read.answered, failures);
    const { changed, gone, deadLetters, requests, failedParents } = this.result;
    const stored = this.result.read;
    this.ctx.logger.info(
      {
        stream,
        requests,
        read: stored,
        changed,
        gone,
        deadLetters,
        failedParents,
      },
      "stream stored",
    );
    if (holding.length > 0) throw parentsFailed(stream, holding);
    if (failures.length > 0)
      this.ctx.logger.warn(
        { stream, parents: failures.length },
        "parents skipped by an operator could not be read; their stored objects are kept, the checkpoint moves",
      );
    await writeCheckpoint(
      this.ctx.warehouse,
      stream,
      nowMs,
      { read: stored, changed, gone, deadLetters, requests },
      this.ctx.insert,
    );
    this.ctx.observer.onCheckpoint?.({ stream, positionMs: nowMs });
  }
}

/** How many failed parents a message names before "and N more". */
const NAMED_PARENTS = 10;

function parentsFailed(
  stream: EntityStream,
  failures: readonly ParentFailure[],
): FatalError {
  const sorted = [...failures].sort((a, b) =>
    a.parent < b.parent ? -1 : a.parent > b.parent ? 1 : 0,
  );
  const named = sorted
    .slice(0, NAMED_PARENTS)
    .map((f) => `${f.parent.slice(0, 100)} (${f.code})`)
    .join(", ");
  const more =
    sorted.length > NAMED_PARENTS
      ? ` and ${sorted.length - NAMED_PARENTS} more`
      : "";
  const what = directorySpec(stream).read.kind === "get" ? "ids" : "parents";
  const first = sorted.find((f) => f.message)?.message;
  const why =
    first === undefined
      ? ""
      : `; the first: ${first.split("\n")[0]?.slice(0, 500)}`;
  return new FatalError(
    "PARENTS_FAILED",
    `${stream}: ${failures.length} ${what} could not be read: ${named}${more}; everything else was stored, their stored objects are kept as they were${why}`,
    {
      hint: "they are read again on the next run; the checkpoint stays until every one of them answers or is skipped (`sessionhouse windows list`, `sessionhouse windows skip STREAM --parent ID --reason ...`)",
    },
  );
}

/** Runs `fn` over `items` with at most `concurrency` at once; the first failure stops it. */
async function pool<T>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const item = items[next++] as T;
      try {
        await fn(item);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, worker),
  );
}
