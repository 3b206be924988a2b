// The evidence checks of `sessionhouse doctor` on real files: the signing key must be a readable
// Ed25519 private key (kept from others), and the directories scheduled reports go to must be
// the owner's only. Modes are read, not tried (tests run as root, who writes whatever they say).
import { generateKeyPairSync } from "node:crypto";
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/index.js";
import { findingOfError, type Finding } from "../../../src/ops/doctor/check.js";
import { REPORT_CHECKS } from "../../../src/ops/doctor/report-checks.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

const root = mkdtempSync(join(testTmpDir(), "sessionhouse-doctor-reports-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function check(
  name: string,
  env: Record<string, string>,
  overrides: Record<string, unknown> = {},
): Promise<Finding> {
  const config = loadConfig({
    env: {
      SESSIONHOUSE_API_URL: "https://cp.example.com",
      SESSIONHOUSE_API_KEY: "k-0123456789abcdef",
      ...env,
    },
    overrides,
  });
  const spec = REPORT_CHECKS.find((s) => s.name === name);
  if (!spec) throw new Error(`no check ${name}`);
  try {
    return await spec.run({ config });
  } catch (err) {
    return findingOfError(err);
  }
}

function keyFile(name: string, type: "ed25519" | "rsa", mode: number) {
  const { privateKey } =
    type === "rsa"
      ? generateKeyPairSync("rsa", { modulusLength: 1024 })
      : generateKeyPairSync("ed25519");
  const file = join(root, name);
  writeFileSync(file, privateKey.export({ type: "pkcs8", format: "pem" }));
  chmodSync(file, mode);
  return file;
}

describe("doctor: the signing key", () => {
  it("skipped, with the reason, when none is configured", async () => {
    expect(await check("signing key", {})).toMatchObject({
      status: "skipped",
      found: expect.stringContaining("SESSIONHOUSE_SIGNING_KEY_FILE") as string,
    });
  });

  it("an Ed25519 key of mode 0600 is ok; readable by others, a warning with the chmod", async () => {
    const own = keyFile("own.pem", "ed25519", 0o600);
    expect(
      await check("signing key", { SESSIONHOUSE_SIGNING_KEY_FILE: own }),
    ).toMatchObject({ status: "ok" });
    const open = keyFile("open.pem", "ed25519", 0o644);
    expect(
      await check("signing key", { SESSIONHOUSE_SIGNING_KEY_FILE: open }),
    ).toMatchObject({ status: "warn", fix: `chmod 0600 ${open}` });
  });

  it("an RSA key, or no file, fails naming the file and how to make a key", async () => {
    const rsa = keyFile("rsa.pem", "rsa", 0o600);
    const wrong = await check("signing key", {
      SESSIONHOUSE_SIGNING_KEY_FILE: rsa,
    });
    expect(wrong.status).toBe("fail");
    expect(wrong.found).toContain(`the signing key ${rsa} is rsa, not Ed25519`);
    expect(wrong.fix).toContain("openssl genpkey -algorithm ed25519");
    const missing = await check("signing key", {
      SESSIONHOUSE_SIGNING_KEY_FILE: join(root, "nothing.pem"),
    });
    expect(missing.status).toBe("fail");
    expect(missing.found).toContain("cannot read the signing key");
  });
});

describe("doctor: the report directories", () => {
  const schedule = (out: string) => ({
    "reports.schedules": [
      {
        kind: "access-review",
        cron: "0 6 1 * *",
        range: "previous-month",
        out,
      },
    ],
  });

  it.each([
    { mode: 0o700, status: "ok" },
    { mode: 0o755, status: "warn" },
    { mode: 0o500, status: "fail" },
  ])("mode $mode is $status", async ({ mode, status }) => {
    const dir = join(root, `reports-${mode.toString(8)}`);
    mkdirSync(dir);
    chmodSync(dir, mode);
    const f = await check("report directories", {}, schedule(dir));
    expect(f.status).toBe(status);
    if (status !== "ok") expect(f.fix).toBe(`chmod 0700 ${dir}`);
  });

  it("a directory not made yet is made on the first report", async () => {
    const f = await check(
      "report directories",
      {},
      schedule(join(root, "later")),
    );
    expect(f).toMatchObject({
      status: "ok",
      found: expect.stringContaining("made when first written") as string,
    });
  });
});
