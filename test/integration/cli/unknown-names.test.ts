// Names an operator types, through the real CLI (the built package, a child process): a job,
// stream, rule, report kind, standard or command that does not exist is refused with exit 2,
// "no <kind> named <name>", the existing names nearest first, no stack, and nothing changed; a
// legal hold on a person or resource no stored session names is refused the same way (the
// people or resources the sessions name, nearest first) unless --force, and with --force the
// output says plainly that no stored session names it yet.
//
// The embedded engine allows one process per data directory: this process opens the warehouse
// only while no child runs. The first refusal runs the built CLI as a child (its exit status and
// stderr, no stack); the others run the CLI's main in this process (cli-in-process.ts), which
// writes the same lines and returns the status the bin wrapper sets.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionSchema } from "../../../src/api/schemas/session.js";
import type { Config } from "../../../src/config/index.js";
import { openWarehouse } from "../../../src/warehouse/client.js";
import { insertRows } from "../../../src/warehouse/insert.js";
import {
  buildCli,
  cleanEnv,
  removeCli,
  runCli,
  type CliPackage,
  type CliResult,
} from "../../helpers/cli.js";
import { mainInProcess } from "../../helpers/cli-in-process.js";
import { sessionRow } from "../../helpers/session-row.js";
import {
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";

let cli: CliPackage;
let config: Config;

beforeAll(async () => {
  cli = await buildCli();
  config = await testConfig();
  const w = await migratedWarehouse(config);
  const people = [
    ["alice", "orders"],
    ["bob", "payments"],
  ] as const;
  const rows = people.map(([user, resource], i) => {
    const raw = JSON.stringify({
      id: `s_${user}`,
      startTime: new Date(Date.now() - (i + 1) * 3_600_000).toISOString(),
      sessionStatus: "completed",
      user: {
        type: "human",
        username: user,
        formal: { user: { id: user, email: `${user}@acme.example` } },
      },
      resource: {
        type: "datastore",
        id: `r_${resource}`,
        name: resource,
        technology: "postgres",
      },
    });
    return sessionRow(sessionSchema.parse(JSON.parse(raw)), raw, Date.now());
  });
  await insertRows(w, "sessions", rows, { retries: 0 });
  await w.close();
}, 180_000);

afterAll(() => {
  removeCli(cli);
});

/** The environment of every run: the test's warehouse, an API nothing answers at. */
function cliEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(
    cleanEnv({
      // An API nothing answers at: no refusal below may reach it.
      SESSIONHOUSE_API_URL: "http://127.0.0.1:9",
      SESSIONHOUSE_API_KEY: "unused-key-1a2b",
      SESSIONHOUSE_DATA_DIR: config.clickhouse.dataDir,
      CLICKHOUSE_DATABASE: config.clickhouse.database,
      CLICKHOUSE_URL: config.clickhouse.url,
      SESSIONHOUSE_LOG_LEVEL: "silent",
    }),
  ))
    if (v !== undefined) env[k] = v;
  return env;
}

/** What a run printed and its exit status. */
type Ran = Pick<CliResult, "code" | "stdout" | "stderr">;

/** The CLI's main in this process. */
async function cli$(...args: string[]): Promise<Ran> {
  const r = await mainInProcess(cliEnv(), ...args);
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The built CLI as a child process. */
function child$(...args: string[]): Promise<Ran> {
  return runCli(cli, args, cliEnv());
}

/** A fingerprint of every table a command here could change, and how many tables there are. */
async function state(): Promise<Record<string, string>> {
  const w = await openWarehouse(config);
  try {
    const out: Record<string, string> = {};
    for (const t of [
      "sessions",
      "legal_holds",
      "legal_hold_events",
      "stream_windows",
      "checkpoints",
      "runs",
    ]) {
      const [r] = await select<{ n: string; h: string }>(
        w,
        `SELECT count() AS n, sum(cityHash64(*)) AS h FROM {db}.${t}${t === "legal_hold_events" ? "" : " FINAL"}`,
      );
      out[t] = `${r?.n}/${r?.h}`;
    }
    const [tables] = await select<{ n: string }>(
      w,
      "SELECT count() AS n FROM system.tables WHERE database = {db:String}",
      { db: config.clickhouse.database },
    );
    out["system.tables"] = String(tables?.n);
    return out;
  } finally {
    await w.close();
  }
}

/**
 * Runs `args`, which name something that does not exist: exit 2, `error: no <kind> named
 * "<name>"`, a hint offering `nearest` first, no stack trace, and every table as it was.
 */
async function refused(
  args: string[],
  expected: { error: string; offered: string; nearest: string },
  run: (...args: string[]) => Promise<Ran> = cli$,
): Promise<Ran> {
  const before = await state();
  const r = await run(...args);
  expect(r.code, r.stderr).toBe(2);
  const [error, hint] = r.stderr.split("\n");
  expect(error).toBe(`error: ${expected.error}`);
  expect(hint).toMatch(
    new RegExp(`^hint: the ${expected.offered}, nearest first: `),
  );
  expect(hint?.split("nearest first: ")[1]?.split(/[,;]/)[0]).toBe(
    expected.nearest,
  );
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(r.stdout).toBe("");
  expect(await state()).toEqual(before);
  return r;
}

describe("a name that does not exist is refused, the nearest offered, nothing changed", () => {
  it("a stream, a report kind, a command", async () => {
    await refused(
      ["sync", "user"],
      { error: 'no stream named "user"', offered: "streams", nearest: "users" },
      child$,
    );
    await refused(["report", "acces-review", "--from", "2026-10-01"], {
      error: 'no report kind named "acces-review"',
      offered: "report kinds",
      nearest: "access-review",
    });
    await refused(["sycn", "sessions"], {
      error: 'no command named "sycn"',
      offered: "commands",
      nearest: "sync",
    });
  });

  it("an aggregation job (sync aggregations --job, windows list --job, windows skip)", async () => {
    await refused(["sync", "aggregations", "--job", "logs_by_technolgy"], {
      error: 'no aggregation job named "logs_by_technolgy"',
      offered: "configured aggregation jobs",
      nearest: "logs_by_technology",
    });
    const list = await refused(["windows", "list", "--job", "sesions"], {
      error: 'no job named "sesions"',
      offered: "jobs",
      nearest: "sessions",
    });
    expect(list.stderr).toContain("nothing was listed");
    const skip = await refused(
      [
        "windows",
        "skip",
        "logs_by_technolgy",
        "--window",
        "2026-11-01T00:00:00Z",
        "--reason",
        "typo",
      ],
      {
        error: 'no job named "logs_by_technolgy"',
        offered: "jobs",
        nearest: "logs_by_technology",
      },
    );
    expect(skip.stderr).toContain("nothing was skipped");
  });

  it("a detection rule (detect run --rule) and a standard (export)", async () => {
    await refused(
      [
        "detect",
        "run",
        "--rule",
        "privileged-native-offhours",
        "--from",
        "-7d",
      ],
      {
        error: 'no rule named "privileged-native-offhours"',
        offered: "rules",
        nearest: "privileged-native-off-hours",
      },
    );
    await refused(["export", "ocfs", "--from", "-7d", "--to", "now"], {
      error: 'no standard named "ocfs"',
      offered: "standards",
      nearest: "ocsf",
    });
  });
});

describe("a hold on a person or resource no stored session names", () => {
  it("is refused without --force, offering the people and resources the sessions name", async () => {
    const person = await refused(
      ["hold", "add", "--user", "alise@acme.example", "--reason", "matter 9"],
      {
        error:
          'no person seen in the stored sessions named "alise@acme.example"',
        offered: "people seen",
        nearest: "alice@acme.example",
      },
    );
    expect(person.stderr).toMatch(/no hold was placed; .*add --force/);
    await refused(
      ["hold", "add", "--resource", "order", "--reason", "matter 9"],
      {
        error: 'no resource seen in the stored sessions named "order"',
        offered: "resources seen",
        nearest: "orders",
      },
    );
    const list = await cli$("hold", "list", "--all", "--json");
    expect(JSON.parse(list.stdout)).toEqual([]);
  });

  it("is placed with --force, saying plainly that no stored session names it yet", async () => {
    const forced = await cli$(
      "hold",
      "add",
      "--user",
      "nobody@nowhere.example",
      "--reason",
      "matter 10",
      "--by",
      "counsel",
      "--force",
    );
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toMatch(
      /^hold_\w+: user nobody@nowhere.example held until released by counsel; 0 stored session rows flagged\nno stored session names the person nobody@nowhere.example yet: /,
    );
    const seen = await cli$(
      "hold",
      "add",
      "--resource",
      "orders",
      "--reason",
      "matter 10",
      "--by",
      "counsel",
    );
    expect(seen.code, seen.stderr).toBe(0);
    expect(seen.stdout).toMatch(
      /^hold_\w+: resource orders held until released by counsel; 1 stored session row flagged\n$/,
    );
    const list = await cli$("hold", "list", "--json");
    expect(
      (JSON.parse(list.stdout) as { value: string }[]).map((h) => h.value),
    ).toEqual(["nobody@nowhere.example", "orders"]);
  });
});
