// What the commands leave on disk is for the owner only: the embedded engine's data directory
// (also one an older version made open to others), a report's directory and files, and the
// Grafana alert rules `detect compile --out` writes, under a umask that would leave them
// readable by every local user. SESSIONHOUSE_GROUP_READABLE shares them with the group on
// purpose.
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildCli,
  cleanEnv,
  removeCli,
  runCli,
  type CliPackage,
} from "../../helpers/cli.js";
import { testTmpDir } from "../../helpers/run-tmp.js";
import { migratedDataDir } from "../../helpers/warehouse.js";

let cli: CliPackage;
let root: string;
let umask: number;

beforeAll(async () => {
  // The usual umask: files 0644 and directories 0755 unless a mode is set on purpose.
  umask = process.umask(0o022);
  cli = await buildCli();
  root = mkdtempSync(join(testTmpDir(), "sessionhouse-files-"));
}, 120_000);

afterAll(() => {
  process.umask(umask);
  removeCli(cli);
  if (root) rmSync(root, { recursive: true, force: true });
});

const mode = (path: string) => statSync(path).mode & 0o777;

function env(dataDir: string, extra: Record<string, string> = {}) {
  return cleanEnv({
    SESSIONHOUSE_DATA_DIR: dataDir,
    SESSIONHOUSE_LOG_FORMAT: "json",
    ...extra,
  });
}

/** `migrate`, then a report of every format but the PDF into `out`; both must succeed. */
async function migrateAndReport(
  dataDir: string,
  out: string,
  extra: Record<string, string> = {},
) {
  const migrated = await runCli(cli, ["migrate"], env(dataDir, extra));
  expect(migrated.code, migrated.stderr).toBe(0);
  const report = await runCli(
    cli,
    [
      "report",
      "coverage-and-integrity",
      "--from",
      "2026-10-01",
      "--to",
      "2026-11-01",
      "--format",
      "html,csv,json",
      "--out",
      out,
    ],
    env(dataDir, extra),
  );
  expect(report.code, report.stderr).toBe(0);
  return migrated;
}

describe("files and permissions", () => {
  it("the data directory and a report (directories and files) are the owner's only", async () => {
    const dataDir = join(root, "private", "data");
    const reports = join(root, "private", "reports");
    const out = join(reports, "october");
    await migrateAndReport(dataDir, out);
    expect(mode(dataDir)).toBe(0o700);
    expect(mode(reports)).toBe(0o700);
    expect(mode(out)).toBe(0o700);
    const files = readdirSync(out);
    expect(files).toEqual(
      expect.arrayContaining(["manifest.json", "report.html", "report.json"]),
    );
    expect(files.some((f) => f.endsWith(".csv"))).toBe(true);
    for (const f of files) expect(mode(join(out, f)), f).toBe(0o600);
  });

  it("a data directory an older version left open to others is closed at open, and said so", async () => {
    // Migrated by this process (the schema replayed, the engine closed again: the only data
    // directory this process opens), then opened to others as an older version left it.
    const dataDir = join(root, "older", "data");
    await migratedDataDir(dataDir);
    chmodSync(dataDir, 0o755);
    expect(mode(dataDir)).toBe(0o755);
    const migrated = await runCli(cli, ["migrate"], env(dataDir));
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(mode(dataDir)).toBe(0o700);
    const notices = migrated.logs.filter(
      (l) => l.msg === "data directory was open to other users: closed",
    );
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ was: "0755", now: "0700" });
    // Once: the next open finds it closed already.
    const again = await runCli(cli, ["migrate"], env(dataDir));
    expect(again.code, again.stderr).toBe(0);
    expect(
      again.logs.filter(
        (l) => l.msg === "data directory was open to other users: closed",
      ),
    ).toHaveLength(0);
  });

  it("SESSIONHOUSE_GROUP_READABLE=true shares them with the group, never with others", async () => {
    const dataDir = join(root, "shared", "data");
    const out = join(root, "shared", "reports", "october");
    await migrateAndReport(dataDir, out, {
      SESSIONHOUSE_GROUP_READABLE: "true",
    });
    expect(mode(dataDir)).toBe(0o750);
    expect(mode(out)).toBe(0o750);
    for (const f of readdirSync(out)) expect(mode(join(out, f)), f).toBe(0o640);
  });

  it("detect compile --out writes the alert rules 0600 in directories it makes 0700 (0640/0750 shared)", async () => {
    for (const [shared, dirMode, fileMode] of [
      ["false", 0o700, 0o600],
      ["true", 0o750, 0o640],
    ] as const) {
      const parent = join(root, `alerting-${shared}`);
      const out = join(parent, "provisioning");
      const r = await runCli(
        cli,
        ["detect", "compile", "--out", out],
        env(join(root, "unused-data"), {
          SESSIONHOUSE_GROUP_READABLE: shared,
        }),
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(
        `alert rules written to ${join(out, "detections.yaml")}\n`,
      );
      expect(mode(parent)).toBe(dirMode);
      expect(mode(out)).toBe(dirMode);
      expect(mode(join(out, "detections.yaml"))).toBe(fileMode);
    }
  });
});
