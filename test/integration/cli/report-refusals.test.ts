// `sessionhouse report` through the real CLI over simulator data: a filter value no stored
// session has is refused (exit 2) with the nearest ones seen, unless --force; a period not begun
// is refused, and --from alone ends the period now; a PDF asked for without Chromium fails (exit 1) and writes nothing; `report
// verify` of a manifest listing no file fails; a directory an interrupted report left is named
// as such, with what to do, and --replace writes over it (never over a finished report). A
// report that runs a few seconds shows its progress on a pseudo-terminal (`script`) and nothing
// when stderr is a pipe.
// The first refusal runs the built CLI as a child (its exit status and stderr without a stack);
// the other runs call the CLI's main in this process (cli-in-process.ts), which writes the same
// lines and files and returns the status the bin wrapper sets.
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { execFile } from "node:child_process";
import { chmodSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { writeManifest } from "../../../src/evidence/manifest.js";
import { cleanEnv, privateCli, runCli } from "../../helpers/cli.js";
import { mainInProcess } from "../../helpers/cli-in-process.js";
import { FROM, TO, reportFixture } from "../../helpers/report-fixture.js";
import { select } from "../../helpers/warehouse.js";

const cli = privateCli();
let env: NodeJS.ProcessEnv;
let outDir: string;
/** A person with sessions in the period, as the report names people (e-mail when known). */
let person: string;

const day = (ms: number) => new Date(ms).toISOString();
const PERIOD = ["--from", day(FROM), "--to", day(TO)];

beforeAll(async () => {
  const f = await reportFixture();
  const [row] = await select<{ p: string }>(
    f.w,
    `SELECT person_email AS p FROM {db}.sessions_enriched
     WHERE person_email != '' AND start_time >= {from:DateTime64(3, 'UTC')}
     ORDER BY p LIMIT 1`,
    { from: day(FROM).replace("T", " ").replace("Z", "") },
  );
  person = String(row?.p);
  outDir = f.outDir;
  env = cleanEnv({
    SESSIONHOUSE_DATA_DIR: f.config.clickhouse.dataDir,
    CLICKHOUSE_DATABASE: f.w.database,
    CLICKHOUSE_URL: f.config.clickhouse.url,
    SESSIONHOUSE_LOG_LEVEL: "silent",
  });
  // The CLI opens the data directory itself.
  await f.w.close();
  await f.sim.close();
}, 180_000);

/** The CLI's main in this process: its exit status as `code`, and what it printed. */
async function sessionhouse(
  args: readonly string[],
  extra: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const own: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...env, ...extra }))
    if (v !== undefined) own[k] = v;
  const r = await mainInProcess(own, ...args);
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const report = (...args: string[]) =>
  sessionhouse(["report", "access-review", ...PERIOD, ...args]);

/** A misspelling of `s`: its first letter of the local part doubled. */
const typo = (s: string) => `${s.slice(0, 1)}${s}`;

describe("report filters", () => {
  it("refuses a user nobody stored has (exit 2), naming the nearest seen; --force writes it and page one says so", async () => {
    expect(person).toContain("@");
    const out = join(outDir, "typo");
    // The built CLI as a child.
    const refused = await runCli(
      cli(),
      [
        "report",
        "access-review",
        ...PERIOD,
        "--filter",
        `user=${typo(person)}`,
        "--format",
        "json",
        "--out",
        out,
      ],
      env,
    );
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(
      `--filter user=${typo(person)}: no session stored up to the period's end has this user (the nearest seen: ${person}`,
    );
    expect(refused.stderr).toMatch(/--force/);
    expect(refused.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(out) ? readdirSync(out) : []).toEqual([]);

    const forced = await report(
      "--filter",
      `user=${typo(person)}`,
      "--format",
      "json",
      "--out",
      out,
      "--force",
    );
    expect(forced.code, forced.stderr).toBe(0);
    const json = JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as {
      notices: { level: string; text: string }[];
    };
    expect(json.notices[0]).toEqual({
      level: "warning",
      text: expect.stringContaining(
        `The filter user=${typo(person)} matches no session stored up to the period's end`,
      ) as unknown,
    });
  });

  it("a real user is not refused", async () => {
    const ok = await report(
      "--filter",
      `user=${person}`,
      "--format",
      "json",
      "--out",
      join(outDir, "real"),
    );
    expect(ok.code, ok.stderr).toBe(0);
  });
});

describe("report periods", () => {
  it("refuses a period that has not begun (exit 2)", async () => {
    const r = await sessionhouse([
      "report",
      "access-review",
      "--from",
      "2099-01-01",
      "--to",
      "2099-02-01",
      "--format",
      "json",
      "--out",
      join(outDir, "future"),
    ]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(
      /the period 2099-01-01 00:00:00 to 2099-02-01 00:00:00 UTC has not begun/,
    );
    expect(existsSync(join(outDir, "future"))).toBe(false);
  });

  it("--from alone ends the period now (not at the previous month's end): --from -7d is the last seven days", async () => {
    const before = Date.now();
    const r = await sessionhouse([
      "report",
      "access-review",
      "--from",
      "-7d",
      "--format",
      "json",
      "--out",
      join(outDir, "last-week"),
    ]);
    const after = Date.now();
    expect(r.code, r.stderr).toBe(0);
    const { period, notices } = JSON.parse(
      readFileSync(join(outDir, "last-week", "report.json"), "utf8"),
    ) as {
      period: { from: string; to: string };
      notices: { text: string }[];
    };
    const to = Date.parse(period.to);
    expect(to).toBeGreaterThanOrEqual(before);
    expect(to).toBeLessThanOrEqual(after);
    expect(to - Date.parse(period.from)).toBe(7 * 86_400_000);
    // Ending now, no part of it is still to come.
    expect(notices.map((n) => n.text).join("\n")).not.toMatch(
      /after this report was made/,
    );
  });
});

describe("report formats", () => {
  it("a PDF asked for without Chromium fails (exit 1), names report.pdf, why and what to do, and writes nothing", async () => {
    const out = join(outDir, "no-pdf");
    const r = await sessionhouse(
      [
        "report",
        "access-review",
        ...PERIOD,
        "--format",
        "html,pdf",
        "--out",
        out,
      ],
      { SESSIONHOUSE_CHROMIUM_PATH: "/nonexistent/chromium" },
    );
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(
      /report\.pdf was asked for \(--format pdf\) and was not written: the configured Chromium \/nonexistent\/chromium .* is not an executable file/,
    );
    expect(r.stderr).toMatch(/SESSIONHOUSE_CHROMIUM_PATH/);
    expect(r.stdout).not.toMatch(/report written/);
    expect(existsSync(out) ? readdirSync(out) : []).toEqual([]);
  });

  it("report verify of a manifest that lists no file fails (exit 1) and says so", async () => {
    const dir = join(outDir, "empty-manifest");
    mkdirSync(dir);
    writeManifest(dir, { kind: "access-review" }, {});
    const r = await sessionhouse(["report", "verify", dir]);
    expect(r.code, r.stdout).toBe(1);
    expect(r.stderr).toContain("its manifest.json lists no file");
    expect(r.stdout).not.toMatch(/^OK/);
  });
});

describe("an interrupted report", () => {
  it("is named as the leftover of an interrupted run with what to do; --replace writes over it", async () => {
    const out = join(outDir, "interrupted");
    mkdirSync(out);
    // What a report stopped before its manifest leaves: its first files, a CSV cut short.
    writeFileSync(join(out, "report.html"), "<html>");
    writeFileSync(join(out, "access-people.csv"), "person,sys");
    const again = await report("--format", "json,csv", "--out", out);
    expect(again.code, again.stderr).toBe(2);
    expect(again.stderr).toContain(
      `the report directory ${out} holds the leftover of an interrupted report: access-people.csv, report.html and no manifest.json`,
    );
    expect(again.stderr).toContain(`rm -r ${out}`);
    expect(again.stderr).toContain("--replace");

    const replaced = await report(
      "--format",
      "json,csv",
      "--out",
      out,
      "--replace",
    );
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(readdirSync(out)).toContain("manifest.json");
    expect(readdirSync(out)).not.toContain("report.html");
    const verify = await sessionhouse(["report", "verify", out]);
    expect(verify.code, verify.stderr).toBe(0);

    // A finished report is never written over, --replace or not.
    const finished = await report(
      "--format",
      "json",
      "--out",
      out,
      "--replace",
    );
    expect(finished.code).toBe(2);
    expect(finished.stderr).toContain("holds a finished report");
    expect(readdirSync(out)).toContain("manifest.json");
  });
});

describe("progress", () => {
  /**
   * A report held three seconds in its last step: its "Chromium" waits, then fails (exit 1).
   * Every table is read first, so the line shown is the last step's.
   */
  const slow = () => {
    const chromium = join(outDir, "slow-chromium.sh");
    writeFileSync(chromium, "#!/bin/sh\nsleep 3\nexit 1\n");
    chmodSync(chromium, 0o700);
    const out = join(outDir, `progress-${Date.now()}`);
    return {
      args: [
        "report",
        "access-review",
        ...PERIOD,
        "--format",
        "pdf",
        "--out",
        out,
      ],
      env: { ...env, SESSIONHOUSE_CHROMIUM_PATH: chromium },
      out,
    };
  };

  it("on a terminal: one line rewritten in place (step n of m), erased before what comes next", async () => {
    const { args, env: own } = slow();
    const command = [process.execPath, cli().bin, ...args]
      .map((a) => `'${a}'`)
      .join(" ");
    // util-linux script runs the command on a pseudo-terminal and copies it to stdout.
    const run = await promisify(execFile)(
      "script",
      ["-qefc", command, "/dev/null"],
      { cwd: cli().root, env: own },
    ).catch((e: { stdout: string; code: number }) => e);
    // The terminal's erase-to-end-of-line sequence (ESC [ K) as the letters "<EL>".
    const tty = String(run.stdout).replaceAll(
      String.fromCharCode(27) + "[K",
      "<EL>",
    );
    expect(tty).toMatch(
      /\rreport access-review: (\d+) of \1, writing pdf \(\d+ s\)<EL>/,
    );
    // Erased, then the failure on a line of its own.
    expect(tty).toMatch(/\r<EL>[^\r]*Chromium/);
  }, 60_000);

  it("not on a terminal: nothing but the outcome on stderr, nothing on stdout", async () => {
    const { args, env: own, out } = slow();
    const r = await runCli(cli(), args, own);
    expect(r.code).toBe(1);
    // Chromium is launched while the tables are read: its failure still leaves no file.
    expect(readdirSync(out)).toEqual([]);
    expect(r.stderr).toMatch(/Chromium/);
    expect(r.stderr).not.toContain("\r");
    expect(r.stderr).not.toContain("report access-review:");
    expect(r.stdout).toBe("");
  }, 60_000);
});
