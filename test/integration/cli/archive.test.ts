// `sessionhouse archive` through the real CLI: export refuses the month in progress and says
// when it can be exported; verify says what it could not check (no public key, no head) and
// calls signatures verified only by a key given; restore needs the public key of a signed month
// and --allow-unsigned for an unsigned one, and says so on stderr.
//
// The embedded engine allows one process per data directory: this process opens the warehouse
// only while no child runs. The refusal of the month in progress runs the built CLI as a child
// (its exit status and stderr); the other commands run the CLI's main in this process
// (cli-in-process.ts), which writes the same lines and files and returns the same status.
import { generateKeyPairSync } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionSchema } from "../../../src/api/schemas/session.js";
import { writeManifest } from "../../../src/evidence/manifest.js";
import { insertRows } from "../../../src/warehouse/insert.js";
import {
  buildCli,
  cleanEnv,
  removeCli,
  runCli,
  type CliPackage,
} from "../../helpers/cli.js";
import { mainInProcess } from "../../helpers/cli-in-process.js";
import { sessionRow } from "../../helpers/session-row.js";
import {
  freshDatabaseName,
  markSessionsSynced,
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

let cli: CliPackage;
let tmp: string;
let root: string;
let priv: string;
let pub: string;
let env: NodeJS.ProcessEnv;
let signing: NodeJS.ProcessEnv;
let dataDir: string;

beforeAll(async () => {
  tmp = mkdtempSync(join(testTmpDir(), "sessionhouse-archive-cli-"));
  root = join(tmp, "archive");
  const keys = generateKeyPairSync("ed25519");
  priv = join(tmp, "signing.pem");
  pub = join(tmp, "signing.pub");
  writeFileSync(priv, keys.privateKey.export({ type: "pkcs8", format: "pem" }));
  writeFileSync(pub, keys.publicKey.export({ type: "spki", format: "pem" }));
  dataDir = join(tmp, "data");
  const config = await testConfig({ SESSIONHOUSE_DATA_DIR: dataDir });
  const w = await migratedWarehouse(config);
  const rows = [0, 1, 2].map((i) => {
    const start = Date.parse("2026-10-03T10:00:00Z") + i * 86_400_000;
    const raw = JSON.stringify({
      id: `s${i}`,
      startTime: new Date(start).toISOString(),
      sessionStatus: "completed",
      user: {
        type: "human",
        username: "alice",
        formal: { user: { id: "alice", email: "alice@acme.example" } },
      },
      resource: {
        type: "datastore",
        id: "r",
        name: "orders",
        technology: "postgres",
      },
    });
    return sessionRow(
      sessionSchema.parse(JSON.parse(raw)),
      raw,
      start + 60_000,
    );
  });
  await insertRows(w, "sessions", rows, { retries: 0 });
  await markSessionsSynced(w, "2026-09-01T00:00:00Z", "2026-11-01T00:00:00Z");
  await w.close();
  cli = await buildCli();
  env = cleanEnv({
    SESSIONHOUSE_DATA_DIR: dataDir,
    CLICKHOUSE_DATABASE: config.clickhouse.database,
    SESSIONHOUSE_LOG_LEVEL: "silent",
  });
  signing = { ...env, SESSIONHOUSE_SIGNING_KEY_FILE: priv };
}, 120_000);

afterAll(() => {
  removeCli(cli);
});

/** `archive …` by the CLI's main in this process, or by the built CLI as a child. */
async function archive(
  args: string[],
  e: NodeJS.ProcessEnv = env,
  via: "child" | "in-process" = "in-process",
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  if (via === "child") return runCli(cli, ["archive", ...args], e);
  const own: Record<string, string> = {};
  for (const [k, v] of Object.entries(e)) if (v !== undefined) own[k] = v;
  const r = await mainInProcess(own, "archive", ...args);
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("archive through the CLI", () => {
  let head: string;

  it("export refuses the month in progress, and exports ended months signed", async () => {
    const current = new Date().toISOString().slice(0, 7);
    const early = await archive(
      ["export", "--month", current, "--to", root],
      signing,
      "child",
    );
    expect(early.code).toBe(1);
    expect(early.stderr).toContain(
      `error: ${current} has not ended for the archive`,
    );
    expect(early.stderr).toMatch(
      new RegExp(
        `hint: export ${current} at or after \\d{4}-\\d\\d-\\d\\dT02:00:00.000Z`,
      ),
    );
    expect(existsSync(join(root, current))).toBe(false);

    for (const month of ["2026-09", "2026-10"]) {
      const r = await archive(
        ["export", "--month", month, "--to", root],
        signing,
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(", signed\n");
      head =
        /chain head \(keep it in write-once storage\): ([0-9a-f]{64})/.exec(
          r.stdout,
        )?.[1] as string;
    }
    expect(head).toMatch(/^[0-9a-f]{64}$/);
  }, 120_000);

  it("verify says what it did not check, and calls signatures verified only by a key given", async () => {
    const blind = await archive(["verify", root]);
    expect(blind.code, blind.stderr).toBe(0);
    expect(blind.stdout).toContain("signatures: 2 of 2 signed, not checked\n");
    expect(blind.stdout).toContain(
      "not checked: signatures not checked: no public key given (--public-key, or SESSIONHOUSE_PUBLIC_KEY_FILE)\n",
    );
    expect(blind.stdout).toContain(
      "not checked: the last month is not checked against a head you keep: no --expect-head given; a removed last month would go unnoticed\n",
    );
    expect(blind.stdout).not.toMatch(/verified by/);

    const full = await archive([
      "verify",
      root,
      "--public-key",
      pub,
      "--expect-head",
      head,
    ]);
    expect(full.code, full.stderr).toBe(0);
    expect(full.stdout).toContain(`signatures: 2 of 2 verified by ${pub}\n`);
    expect(full.stdout).toContain(`chain head: ${head} (the expected head)\n`);
    expect(full.stdout).not.toContain("not checked");
  }, 120_000);

  it("restore needs the public key of a signed month, and --allow-unsigned for an unsigned one", async () => {
    const keyless = await archive([
      "restore",
      "--month",
      "2026-10",
      "--from",
      root,
    ]);
    expect(keyless.code).toBe(1);
    expect(keyless.stderr).toMatch(
      /error: the archive of 2026-10 is signed \(key [0-9a-f]{64}\), and no public key is given/,
    );
    expect(keyless.stderr).toContain(
      "hint: give the public key the archive must be signed by: --public-key",
    );

    const keyed = await archive(
      ["restore", "--month", "2026-10", "--from", root],
      {
        ...env,
        SESSIONHOUSE_PUBLIC_KEY_FILE: pub,
      },
    );
    expect(keyed.code, keyed.stderr).toBe(0);
    expect(keyed.stdout).toMatch(
      /^2026-10 restored into (\S+): sessions 3 rows \(counted in \1 after the load; the archive holds 3\)\n$/,
    );
    expect(keyed.stderr).toBe("");
    // September was exported without a session: restoring it says so.
    const empty = await archive(
      ["restore", "--month", "2026-09", "--from", root],
      { ...env, SESSIONHOUSE_PUBLIC_KEY_FILE: pub },
    );
    expect(empty.code, empty.stderr).toBe(0);
    expect(empty.stdout).toMatch(
      /^2026-09 restored into \S+: the archive holds no rows\n$/,
    );

    const unsignedRoot = join(tmp, "unsigned");
    cpSync(root, unsignedRoot, { recursive: true });
    const dir = join(unsignedRoot, "2026-10");
    const m = JSON.parse(
      readFileSync(join(dir, "manifest.json"), "utf8"),
    ) as Record<string, unknown>;
    delete m.files;
    delete m.signature;
    writeManifest(dir, m);
    const refused = await archive([
      "restore",
      "--month",
      "2026-10",
      "--from",
      unsignedRoot,
      "--public-key",
      pub,
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      "error: the archive of 2026-10 is not signed",
    );
    expect(refused.stderr).toContain("hint: restore it with --allow-unsigned");
    const allowed = await archive([
      "restore",
      "--month",
      "2026-10",
      "--from",
      unsignedRoot,
      "--allow-unsigned",
    ]);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stderr).toBe(
      "warning: 2026-10 is not signed: restored because --allow-unsigned was given; nothing shows who wrote it\n",
    );
  }, 180_000);

  it("restore loads into tables without the environment's retention, and prints the rows counted there", async () => {
    const database = freshDatabaseName();
    const r = await archive(
      ["restore", "--month", "2026-10", "--from", root, "--database", database],
      {
        ...env,
        SESSIONHOUSE_PUBLIC_KEY_FILE: pub,
        SESSIONHOUSE_RETENTION_DAYS: "27",
      },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      `2026-10 restored into ${database}: sessions 3 rows (counted in ${database} after the load; the archive holds 3)\n`,
    );
    // October is past a 27-day retention: the restored rows stay through a merge.
    const w = await migratedWarehouse(
      await testConfig({ SESSIONHOUSE_DATA_DIR: dataDir }, database),
    );
    try {
      await w.client.command({
        query: `OPTIMIZE TABLE \`${database}\`.sessions FINAL`,
      });
      const [n] = await select<{ n: string }>(
        w,
        "SELECT count() AS n FROM {db}.sessions FINAL",
      );
      expect(Number(n?.n)).toBe(3);
    } finally {
      await w.close();
    }
  }, 120_000);
});
