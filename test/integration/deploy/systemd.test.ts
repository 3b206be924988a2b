// The systemd unit in deploy/systemd: systemd accepts it, it starts node on the CLI itself (not
// npx, which would not pass systemd's SIGTERM on), and systemd waits longer than the service's
// shutdown deadline before SIGKILL.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/index.js";
import { ROOT } from "../../helpers/cli.js";

const UNIT = join(ROOT, "deploy", "systemd", "sessionhouse.service");
const text = readFileSync(UNIT, "utf8");

function value(key: string): string | undefined {
  return new RegExp(`^${key}=(.*)$`, "m").exec(text)?.[1]?.trim();
}

describe("deploy/systemd/sessionhouse.service", () => {
  it("runs the CLI with node, so that SIGTERM reaches the service", () => {
    const exec = value("ExecStart") ?? "";
    expect(exec).toMatch(/^\/usr\/bin\/node \S+\/bin\/sessionhouse\.js run$/);
    expect(exec).not.toMatch(/npx|npm/);
    expect(existsSync(join(ROOT, "bin", "sessionhouse.js"))).toBe(true);
    expect(value("KillSignal")).toBe("SIGTERM");
  });

  it("waits longer than the shutdown deadline before SIGKILL, and writes for its owner only", () => {
    const config = loadConfig({
      env: {
        SESSIONHOUSE_API_URL: "http://127.0.0.1:1",
        SESSIONHOUSE_API_KEY: "test-key-0000",
      },
    });
    expect(Number(value("TimeoutStopSec")) * 1000).toBeGreaterThan(
      config.service.shutdownDeadlineMs,
    );
    expect(value("UMask")).toBe("0077");
  });

  it.skipIf(!existsSync("/usr/bin/systemd-analyze"))(
    "is a unit systemd accepts",
    () => {
      // verify names each line systemd would ignore on stderr, often with exit status 0.
      const r = spawnSync("systemd-analyze", ["verify", UNIT], {
        encoding: "utf8",
      });
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
    },
  );
});
