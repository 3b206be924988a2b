// A migration stopped between two statements (the process killed, a server error) is completed
// by the next `migrate`: for every migration file and the statement boundaries in it that can
// differ (test/helpers/rerun-forms.ts: after every statement not a no-op when run again by its
// form, after each such file's last statement, every boundary of the bootstrap), a database
// holding sessions gets the migrations before it, then the file's first k statements as a
// stopped run left them, then `migrate`; its tables, columns and rows must equal those of a
// clean `migrate` over the same rows (compared where the file ends, or at head when they differ
// there: see stopAndResume). Two kinds of stop: after statement k was recorded (killed between
// two statements), and with statement k run but its ledger row not written (killed in between,
// or a server error on that write): the next run runs statement k again, or for a
// statement that must not run twice (src/warehouse/rerun-guards.ts) sees that it ran. Which
// stops of the first kind are made, and why the others prove nothing more: see STOPS.
import { isDeepStrictEqual } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import {
  openWarehouse,
  type Warehouse,
} from "../../../src/warehouse/client.js";
import {
  applyStatement,
  migrate,
  pendingMigrations,
  readMigrations,
  renderSql,
  type MigrationFile,
} from "../../../src/warehouse/migrate.js";
import { rerunGuard } from "../../../src/warehouse/rerun-guards.js";
import { stopBoundaries } from "../../helpers/rerun-forms.js";
import { onDatabase, rowsOf, schemaOf } from "../../helpers/schema-snapshot.js";
import {
  captureTemplate,
  replayTemplate,
  type SchemaTemplate,
} from "../../helpers/schema-template.js";
import {
  freshDatabaseName,
  select,
  testConfig,
} from "../../helpers/warehouse.js";

// One engine (or server connection) for the file; each case gets a database of its own.
let base: Warehouse | undefined;
afterAll(async () => {
  if (walker) await drop(walker.w);
  for (const w of kept) await drop(w);
  await base?.close();
});

async function freshDatabase(): Promise<Warehouse> {
  base ??= await openWarehouse(await testConfig());
  return onDatabase(base, freshDatabaseName());
}

const FILES = readMigrations();
const BOOTSTRAP = FILES[0]?.version;

/** Sessions over two months, one of them stored under two start times. */
async function seed(w: Warehouse): Promise<void> {
  const [exists] = await select<{ result: number }>(
    w,
    "EXISTS TABLE {db}.sessions",
  );
  if (!exists?.result) return;
  await w.client.command({
    query: `INSERT INTO \`${w.database}\`.sessions
      (id, start_time, session_status, user_username, user_email, resource_name, resource_technology, raw, fetched_at, version)
      VALUES
      ('s1', '2026-10-30 10:00:00.000', 'completed', 'ada', 'ada@acme.example', 'orders', 'postgres', '{"id":"s1"}', '2026-10-30 11:00:00.000', 1),
      ('s2', '2026-11-02 09:00:00.000', 'active', 'bob', '', 'ledger', 'snowflake', '{"id":"s2"}', '2026-11-02 09:30:00.000', 1),
      ('s2', '2026-11-02 09:00:01.000', 'completed', 'bob', '', 'ledger', 'snowflake', '{"id":"s2"}', '2026-11-02 10:30:00.000', 2),
      ('s3', '2026-11-03 08:00:00.000', 'completed', 'cy', 'cy@acme.example', 'orders', 'postgres', '{"id":"s3"}', '2026-11-03 09:00:00.000', 1)`,
  });
}

// The state "migrated to the file before version v" is made once: one database walks the
// migrations in order (a clean `migrate --to`), its tables, views and ledger are captured before
// each file a case stops in, and every case's database gets that capture replayed (one CREATE
// per object and the ledger's rows) instead of running every migration before it again. The
// first replay of each capture (the clean reference's) is checked against the walked database.
let walker: { w: Warehouse; at: number } | undefined;
const captured = new Map<
  number,
  { template: SchemaTemplate; walked: Snapshot; checked: boolean }
>();

async function migratedBefore(version: number) {
  const done = captured.get(version);
  if (done) return done;
  const previous = FILES.filter((f) => f.version < version).at(-1);
  if (!previous) throw new Error(`no migration before ${version}`);
  if (!walker || walker.at > previous.version)
    walker = { w: await freshDatabase(), at: 0 };
  await migrate(walker.w, { to: previous.version });
  walker.at = previous.version;
  const state = {
    template: await captureTemplate(walker.w),
    walked: await snapshot(walker.w),
    checked: false,
  };
  captured.set(version, state);
  return state;
}

/** A fresh database with the migrations before `version` applied and sessions stored. */
async function before(version: number): Promise<Warehouse> {
  const w = await freshDatabase();
  if (version === BOOTSTRAP) return w;
  const state = await migratedBefore(version);
  const statements = await replayTemplate(w, state.template);
  if (!state.checked) {
    // The replay must be the migrated state: same tables, columns and rows.
    expect(await snapshot(w)).toEqual(state.walked);
    state.template = { ...state.template, statements };
    state.checked = true;
  }
  await seed(w);
  return w;
}

type Snapshot = Awaited<ReturnType<typeof snapshot>>;

/**
 * A clean `migrate --to version` from the state before `version` (schema and rows), and on
 * demand the same database taken on to head by `migrate`, under FINAL.
 */
interface Reference {
  clean: Snapshot;
  headFinal(): Promise<Snapshot>;
}
const references = new Map<number, Promise<Reference>>();
/** The reference databases, dropped when the file ends. */
const kept: Warehouse[] = [];

function cleanMigrate(version: number): Promise<Reference> {
  let reference = references.get(version);
  if (!reference) {
    reference = (async () => {
      const w = await before(version);
      kept.push(w);
      await migrate(w, { to: version });
      const clean = await snapshot(w);
      let head: Promise<Snapshot> | undefined;
      const headFinal = () =>
        (head ??= (async () => {
          await migrate(w);
          return snapshot(w, true);
        })());
      return { clean, headFinal };
    })();
    references.set(version, reference);
  }
  return reference;
}

/**
 * The warehouse with a server that fails the ledger write of one statement after running the
 * statement: the run stops with the statement applied and not recorded.
 */
function losingLedgerRow(w: Warehouse, name: string): Warehouse {
  const client = new Proxy(w.client, {
    get(target, prop, receiver) {
      if (prop === "insert")
        return async (args: Parameters<typeof target.insert>[0]) => {
          if (JSON.stringify(args.values).includes(`"name":"${name}"`))
            throw new Error("server error: ledger row lost");
          return target.insert(args);
        };
      const v: unknown = Reflect.get(target, prop, receiver);
      return typeof v === "function"
        ? (v as (...a: unknown[]) => unknown).bind(target)
        : v;
    },
  });
  return { ...w, client };
}

/**
 * Schema and rows; `final` reads replacing and aggregating tables under FINAL: an INSERT …
 * SELECT run again writes its rows again into such a table, which FINAL and merges fold.
 */
async function snapshot(w: Warehouse, final = false) {
  return { schema: await schemaOf(w), rows: await rowsOf(w, { final }) };
}

async function drop(w: Warehouse): Promise<void> {
  await w.client.command({
    query: `DROP DATABASE IF EXISTS \`${w.database}\``,
  });
}

/**
 * Stops `file` after its first k statements, statement k recorded or run and not recorded, then
 * runs `migrate` and asserts that it completed the file. The resumed run is compared with a
 * clean one where the file ends (`migrate --to` it): the files after it run the same statements
 * on the same schema and rows whichever way the database got there, so a state equal there is
 * equal at head. A state that differs there (a statement run again wrote its rows again into a
 * replacing table) is taken on to head, where it must equal a clean run's under FINAL.
 */
async function stopAndResume(
  file: MigrationFile,
  k: number,
  recorded: boolean,
): Promise<void> {
  const reference = await cleanMigrate(file.version);
  const w = await before(file.version);
  const pending = (await pendingMigrations(w, { to: file.version })).at(-1);
  const todo = pending?.statements ?? [];
  expect(todo.length).toBeGreaterThanOrEqual(k);
  for (const s of todo.slice(0, k)) {
    // The bootstrap's statements are never recorded (they run until the ledger exists).
    if (file.version === BOOTSTRAP || !pending)
      await w.client.command({ query: s.sql });
    else if (recorded || s.index < k - 1)
      await applyStatement(w, pending.file, s);
    else
      await expect(
        applyStatement(
          losingLedgerRow(w, `${file.name}#${s.index}`),
          pending.file,
          s,
        ),
      ).rejects.toThrow(/ledger row lost/);
  }
  await migrate(w, { to: file.version });
  const what = `${file.name} stopped after statement ${k} (${recorded ? "recorded" : "run, not recorded"})`;
  const resumed = await snapshot(w);
  if (recorded || isDeepStrictEqual(resumed, reference.clean))
    expect(resumed, what).toEqual(reference.clean);
  else {
    await migrate(w);
    expect(await snapshot(w, true), `${what}, at head`).toEqual(
      await reference.headFinal(),
    );
  }
  await drop(w);
}

// The boundaries stopped at (test/helpers/rerun-forms.ts says which and why): the stops after a
// statement that is a no-op when run again by its form resume as the stop before it does.
//
// A stop with statement k recorded leaves the database as a clean run has it before statement
// k + 1, whatever the statement: the resumed run differs from a clean one only in the statements
// its ledger marks done (pendingMigrations). Those stops are made in one file,
// RECORDED_STOPS_IN, whose stops cover every way a statement is marked done: an unguarded
// statement, a guarded one (rerun-guards.ts: its "before" row and its own row), an index of
// two digits, and the file's last statement (every statement done, the file not yet recorded
// applied); the bootstrap's own path (no ledger) keeps every boundary. A stop after a statement
// run and not recorded runs that statement again (or completes it by its guard): that depends
// on the statement, and is made at every boundary.
const RECORDED_STOPS_IN = "0023_session_tombstones.sql";

const STOPS = FILES.map((file) => {
  const bootstrap = file.version === BOOTSTRAP;
  const statements = renderSql(file.text, { db: "db" });
  const kinds = bootstrap
    ? [true] // The bootstrap writes no ledger row: there is one kind of stop.
    : file.name === RECORDED_STOPS_IN
      ? [true, false]
      : [false];
  return {
    file,
    statements,
    cases: stopBoundaries(statements, { bootstrap }).flatMap((k) =>
      kinds.map((recorded) => ({
        k,
        recorded,
        kind: recorded ? "recorded" : "run, not recorded",
        statement: (statements[k - 1] ?? "").replace(/\s+/g, " ").slice(0, 60),
      })),
    ),
  };
}).filter((f) => f.cases.length > 0);

describe("the recorded stops", () => {
  it("cover an unguarded and a guarded statement, a two-digit index and a file's last statement", () => {
    const file = STOPS.find((f) => f.file.name === RECORDED_STOPS_IN);
    const ks = (file?.cases ?? []).filter((c) => c.recorded).map((c) => c.k);
    const sql = (k: number) => file?.statements[k - 1] ?? "";
    expect(ks.some((k) => !rerunGuard(sql(k)))).toBe(true);
    expect(ks.some((k) => rerunGuard(sql(k)))).toBe(true);
    expect(ks.some((k) => k - 1 >= 10)).toBe(true);
    expect(ks).toContain(file?.statements.length);
  });
});

describe.each(STOPS.map((s) => [s.file.name, s] as const))(
  "migration %s stopped part way",
  (_name, { file, cases }) => {
    it.each(cases)(
      "is completed by the next migrate after statement $k ($kind): $statement",
      { timeout: 300_000 },
      async ({ k, recorded }) => {
        await stopAndResume(file, k, recorded);
      },
    );
  },
);

describe("a rebuild stopped inside ATTACH PARTITION ALL FROM", () => {
  it("attaches the partitions it had not attached yet, and no part twice", async () => {
    const { clean } = await cleanMigrate(23);

    const w = await before(23);
    const pending = (await pendingMigrations(w, { to: 23 })).at(-1);
    const statements = pending?.statements ?? [];
    const at = statements.findIndex((s) =>
      /ATTACH PARTITION ALL FROM/.test(s.sql),
    );
    expect(at).toBeGreaterThan(0);
    for (const s of statements.slice(0, at))
      if (pending) await applyStatement(w, pending.file, s);
    // The server attaches the first of the two months, then fails.
    const client = new Proxy(w.client, {
      get(target, prop, receiver) {
        if (prop === "command")
          return async (args: Parameters<typeof target.command>[0]) => {
            if (!args.query.includes("ATTACH PARTITION ALL FROM"))
              return target.command(args);
            await target.command({
              query: args.query.replace(
                "ATTACH PARTITION ALL FROM",
                "ATTACH PARTITION ID '202610' FROM",
              ),
            });
            throw new Error("server error after one partition");
          };
        const v: unknown = Reflect.get(target, prop, receiver);
        return typeof v === "function"
          ? (v as (...a: unknown[]) => unknown).bind(target)
          : v;
      },
    });
    const attach = statements[at];
    if (!pending || !attach) throw new Error("no ATTACH statement");
    await expect(
      applyStatement({ ...w, client }, pending.file, attach),
    ).rejects.toThrow(/server error after one partition/);
    await migrate(w, { to: 23 });
    expect(await snapshot(w)).toEqual(clean);
    await drop(w);
  });
});
