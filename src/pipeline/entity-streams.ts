// The entity streams: each reads its objects through the control plane's read operations
// (List*/Get* only), stores them with history (entity-history.ts) and moves its checkpoint to
// the time of the read once everything it read is stored. What cannot be stored goes to
// dead_letters with the reason; records are never logged.
import type { DirectoryList } from "../api/control-plane.js";
import {
  inventoryColumns,
  isBad,
  normalizeCloud,
  normalizeDevice,
  normalizeIdentityLink,
  normalizeNativeUser,
  normalizeSuspension,
  normalizeUser,
  type BadRecord,
  type EntityRecord,
  type Normalized,
} from "../sources/directory.js";
import {
  insertDeadLetters,
  writeCheckpoint,
} from "../warehouse/bookkeeping.js";
import {
  humanUserIds,
  insertEntityRows,
  knownSuspensionVersions,
  sessionResourceIds,
  sessionUserIds,
  usersLastRead,
} from "../warehouse/entities.js";
import { chTime } from "../warehouse/format.js";
import { Tables } from "../warehouse/tables.js";
import type { ApiError } from "../api/errors.js";
import { isExpiredCursor } from "../sources/sessions.js";
import { FatalError } from "../util/errors.js";
import type { JobContext } from "./context.js";
import { storeRead } from "./entity-history.js";
import type { EntityStream } from "./names.js";

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
  const run = new StreamRun(ctx, stream);
  switch (stream) {
    case "users":
      await run.users(nowMs);
      break;
    case "user_devices":
      await run.perParent(
        "user_devices",
        await humanUserIds(ctx.warehouse),
        "listUserDevices",
        "userId",
        (v, userId) => normalizeDevice(v, userId),
        (row) => String(row.user_id),
        nowMs,
      );
      break;
    case "native_users":
      await run.perParent(
        "native_users",
        await sessionResourceIds(ctx.warehouse),
        "listNativeUsers",
        "resourceId",
        (v) => normalizeNativeUser(v),
        (row) => String(row.resource_id),
        nowMs,
      );
      break;
    case "identity_links":
      await run.full(
        "identity_links",
        "listIdentityLinks",
        (v) => [normalizeIdentityLink(v)],
        nowMs,
      );
      break;
    case "inventory":
      await run.full(
        "inventory",
        "listInventoryObjects",
        inventoryColumns,
        nowMs,
      );
      break;
    case "clouds":
      await run.full(
        "clouds",
        "listIntegrationClouds",
        (v) => [normalizeCloud(v)],
        nowMs,
      );
      break;
    case "policy_suspensions":
      await run.suspensions(nowMs);
      break;
  }
  await run.finish(nowMs);
  return run.result;
}

class StreamRun {
  readonly result: EntityStreamResult;
  readonly #letters: BadRecord[] = [];

  constructor(
    readonly ctx: JobContext,
    readonly stream: EntityStream,
  ) {
    this.result = {
      stream,
      requests: 0,
      read: 0,
      changed: 0,
      gone: 0,
      deadLetters: 0,
    };
  }

  /** Good records of `normalized`; the bad ones are kept for dead_letters. */
  #sort(normalized: readonly Normalized[]): EntityRecord[] {
    const good: EntityRecord[] = [];
    for (const n of normalized) {
      if (isBad(n)) this.#letters.push(n);
      else good.push(n);
    }
    return good;
  }

  /**
   * Every element of a listing, page after page, until there is no next cursor. A cursor the
   * service refuses (expired) restarts the listing, at most MAX_RESTARTS times.
   */
  async #listAll(
    operation: DirectoryList,
    filters: Readonly<Record<string, string>>,
    stopAfter?: (page: readonly unknown[]) => boolean,
  ): Promise<unknown[]> {
    for (let restarts = 0; ; restarts++) {
      try {
        return await this.#listOnce(operation, filters, stopAfter);
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

  /** One pass of a listing; `stopAfter` ends it early after a page it says is enough. */
  async #listOnce(
    operation: DirectoryList,
    filters: Readonly<Record<string, string>>,
    stopAfter?: (page: readonly unknown[]) => boolean,
  ): Promise<unknown[]> {
    const items: unknown[] = [];
    const seen = new Set<string>();
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
      if (page.listMetadata.nextCursor === "" || stopAfter?.(page.items))
        return items;
      cursor = page.listMetadata.nextCursor;
    }
  }

  #counted(): void {
    this.result.requests++;
    this.ctx.counters.pages++;
  }

  #add(r: { read: number; changed: number; gone: number }): void {
    this.result.read += r.read;
    this.result.changed += r.changed;
    this.result.gone += r.gone;
  }

  /** A full listing: whatever it no longer returns is gone. */
  async full(
    stream: "identity_links" | "inventory" | "clouds",
    operation: DirectoryList,
    normalize: (v: unknown) => Normalized[],
    nowMs: number,
  ): Promise<void> {
    const items = await this.#listAll(operation, {});
    const records = this.#sort(items.flatMap(normalize));
    this.#add(await storeRead(this.ctx, stream, records, () => true, nowMs));
  }

  /**
   * One listing per parent (a user's devices, a resource's native users): an object of a
   * parent whose listing completed and no longer holds it is gone.
   */
  async perParent(
    stream: "user_devices" | "native_users",
    parents: readonly string[],
    operation: DirectoryList,
    filter: string,
    normalize: (v: unknown, parent: string) => Normalized,
    parentOf: (row: Record<string, unknown>) => string,
    nowMs: number,
  ): Promise<void> {
    const records: EntityRecord[] = [];
    const done = new Set<string>();
    await pool(
      parents,
      this.ctx.config.streams.usersConcurrency,
      async (parent) => {
        const items = await this.#listAll(operation, { [filter]: parent });
        records.push(...this.#sort(items.map((v) => normalize(v, parent))));
        done.add(parent);
      },
    );
    this.#add(
      await storeRead(
        this.ctx,
        stream,
        records,
        (row) => done.has(parentOf(row)),
        nowMs,
      ),
    );
  }

  /** GetUser for every user sessions name that was never read or not since usersRefreshMs. */
  async users(nowMs: number): Promise<void> {
    const ids = await sessionUserIds(this.ctx.warehouse);
    const last = await usersLastRead(this.ctx.warehouse);
    const due = ids.filter((id) => {
      const at = last.get(id);
      return (
        at === undefined || nowMs - at >= this.ctx.config.streams.usersRefreshMs
      );
    });
    const records: EntityRecord[] = [];
    const asked = new Set<string>();
    await pool(due, this.ctx.config.streams.usersConcurrency, async (id) => {
      const user = await this.ctx.api.getUser(id, {
        signal: this.ctx.signal,
        budget: this.ctx.budget,
      });
      this.#counted();
      asked.add(id);
      if (user !== undefined)
        records.push(...this.#sort([normalizeUser(user)]));
    });
    this.#add(
      await storeRead(
        this.ctx,
        "users",
        records,
        (row) => asked.has(row.id),
        nowMs,
      ),
    );
  }

  /**
   * Newest first, page after page, until a page holds a version already stored that was
   * created before the re-read period (suspensions change while they are young: extended,
   * shortened); every version not stored yet is added.
   */
  async suspensions(nowMs: number): Promise<void> {
    const rereadFromMs =
      nowMs - this.ctx.config.streams.policySuspensionsRereadMs;
    const known = await knownSuspensionVersions(this.ctx.warehouse, 0);
    const keyOf = (r: EntityRecord) => `${r.id}|${r.contentHash}`;
    const oldAndKnown = (v: unknown) => {
      const r = normalizeSuspension(v);
      if (isBad(r) || !known.has(keyOf(r))) return false;
      const createdMs = Date.parse(
        String(r.columns.created_at).replace(" ", "T") + "Z",
      );
      return createdMs < rereadFromMs;
    };
    const items = await this.#listAll(
      "listPolicySuspensions",
      { order: "desc" },
      (page) => page.some(oldAndKnown),
    );
    const rows: object[] = [];
    for (const r of this.#sort(items.map(normalizeSuspension))) {
      this.result.read++;
      if (known.has(keyOf(r))) continue;
      known.add(keyOf(r));
      rows.push({
        id: r.id,
        ...r.columns,
        content_hash: r.contentHash,
        observed_at: chTime(nowMs),
        raw: r.raw,
      });
      this.result.changed++;
    }
    await insertEntityRows(
      this.ctx.warehouse,
      Tables.policySuspensions,
      rows,
      this.ctx.insert,
    );
    this.ctx.counters.rowsInserted += rows.length;
    this.ctx.observer.onRows?.({
      job: this.ctx.job,
      table: Tables.policySuspensions,
      rows: rows.length,
    });
  }

  /** Dead letters, then the checkpoint at the time of the read. */
  async finish(nowMs: number): Promise<void> {
    if (this.#letters.length > 0) {
      await insertDeadLetters(
        this.ctx.warehouse,
        this.#letters.map((l) => ({
          job: this.ctx.job,
          recordId: l.recordId,
          reason: l.reason,
          raw: l.raw,
          runId: this.ctx.runId,
        })),
        this.ctx.insert,
      );
      this.result.deadLetters = this.#letters.length;
      this.ctx.counters.deadLetters += this.#letters.length;
      this.ctx.observer.onDeadLetters?.({
        job: this.ctx.job,
        count: this.#letters.length,
      });
    }
    const { read, changed, gone, deadLetters, requests } = this.result;
    await writeCheckpoint(
      this.ctx.warehouse,
      this.stream,
      nowMs,
      { read, changed, gone, deadLetters, requests },
      this.ctx.insert,
    );
    this.ctx.observer.onCheckpoint?.({
      stream: this.stream,
      positionMs: nowMs,
    });
    this.ctx.logger.info(
      { stream: this.stream, requests, read, changed, gone, deadLetters },
      "stream stored",
    );
  }
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
