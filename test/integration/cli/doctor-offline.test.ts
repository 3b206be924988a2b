// `doctor --offline`: the configuration checked alone, on a machine with no API settings, no
// network and no data directory yet: each setting given, its value and where it came from,
// misspelt names with the one meant, and nothing created.
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cleanEnv, privateCli, runCli } from "../../helpers/cli.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

const cli = privateCli();
const PASSWORD = "a-clickhouse-password-0123";

describe("doctor --offline", () => {
  it("lists the settings given and where from, names misspelt variables, needs no API and creates nothing", async () => {
    const dir = mkdtempSync(join(testTmpDir(), "doctor-offline-"));
    const file = join(dir, "sessionhouse.yaml");
    writeFileSync(file, "sessions:\n  pageSize: 5000\n");
    const dataDir = join(dir, "data");
    const r = await runCli(
      cli(),
      ["--config", file, "doctor", "--offline"],
      cleanEnv({
        SESSIONHOUSE_DATA_DIR: dataDir,
        CLICKHOUSE_PASSWORD: PASSWORD,
        SESSIONHOUSE_RETENTON_DAYS: "30",
        // The address of nothing: an offline check never asks it.
        CLICKHOUSE_URL: undefined,
      }),
    );
    expect(r.code, r.stderr).toBe(0);
    const row = (setting: string) =>
      r.stdout.split("\n").find((l) => l.startsWith(`│ ${setting} `)) ?? "";
    expect(row("sessions.pageSize")).toMatch(
      new RegExp(`│ SESSIONHOUSE_PAGE_SIZE +│ 5000 +│ ${file} +│$`),
    );
    expect(row("clickhouse.password")).toMatch(
      /│ CLICKHOUSE_PASSWORD +│ \[REDACTED\] +│ CLICKHOUSE_PASSWORD +│$/,
    );
    expect(row("api.url")).toMatch(/│ \(not set\) +│ nowhere/);
    // Settings at their default are counted, not listed.
    expect(row("sessions.windowMs")).toBe("");
    expect(r.stdout).toMatch(/and \d+ settings at the default/);
    expect(r.stdout).toContain(
      "SESSIONHOUSE_RETENTON_DAYS is set, and no setting reads it (did you mean SESSIONHOUSE_RETENTION_DAYS?)",
    );
    expect(r.stdout).toMatch(/^warn +config api url: .*not set/m);
    expect(r.stdout + r.stderr).not.toContain(PASSWORD);
    expect(existsSync(dataDir)).toBe(false);
  });

  it("--json: every setting with its value and source, for programs", async () => {
    const r = await runCli(
      cli(),
      ["doctor", "--offline", "--json"],
      cleanEnv({ SESSIONHOUSE_PAGE_SIZE: "250" }),
    );
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as {
      settings: { setting: string; value: string; from: string }[];
      checks: { family: string }[];
    };
    expect(
      report.settings.find((s) => s.setting === "sessions.pageSize"),
    ).toMatchObject({ value: "250", from: "SESSIONHOUSE_PAGE_SIZE" });
    expect(
      report.settings.find((s) => s.setting === "sessions.windowMs")?.from,
    ).toBe("default");
    expect(new Set(report.checks.map((c) => c.family))).toEqual(
      new Set(["config"]),
    );
  });
});
