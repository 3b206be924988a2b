// `sessionhouse hold add|list|release` and the holds in `status`: a hold is recorded with who,
// why and until when, flags the stored sessions it names, shows in `hold list` and `status`;
// releasing it records who and why and unflags them; bad input is refused with exit 2.
import { beforeAll, describe, expect, it } from "vitest";
import { sessionSchema } from "../../../src/api/schemas/session.js";
import type { StatusReport } from "../../../src/cli/commands/status.js";
import { mainInProcess } from "../../helpers/cli-in-process.js";
import { insertRows } from "../../../src/warehouse/insert.js";
import { sessionRow } from "../../helpers/session-row.js";
import {
  migratedWarehouse,
  testConfig,
  testDataDir,
} from "../../helpers/warehouse.js";

let env: Record<string, string>;

beforeAll(async () => {
  const config = await testConfig();
  env = {
    SESSIONHOUSE_DATA_DIR: testDataDir(),
    CLICKHOUSE_DATABASE: config.clickhouse.database,
    SESSIONHOUSE_LOG_LEVEL: "silent",
  };
  const w = await migratedWarehouse(config);
  const rows = ["alice", "bob"].map((user, i) => {
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
        id: "r",
        name: "orders",
        technology: "postgres",
      },
    });
    return sessionRow(sessionSchema.parse(JSON.parse(raw)), raw, Date.now());
  });
  await insertRows(w, "sessions", rows, { retries: 0 });
  // The CLI opens the data directory itself.
  await w.close();
});

function cli(...args: string[]) {
  return mainInProcess(env, ...args);
}

describe("hold", () => {
  it("adds, lists, shows in status and releases a hold, flagging and unflagging the sessions", async () => {
    const add = await cli(
      "hold",
      "add",
      "--user",
      "alice@acme.example",
      "--reason",
      "matter 7",
      "--by",
      "counsel",
    );
    expect(add.status, add.stderr).toBe(0);
    expect(add.stdout).toMatch(
      /^hold_\w+: user alice@acme.example held until released by counsel; 1 stored session row flagged\n$/,
    );
    const id = add.stdout.split(":")[0] as string;

    const list = await cli("hold", "list", "--json");
    expect(list.status, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual([
      expect.objectContaining({
        holdId: id,
        scope: "user",
        value: "alice@acme.example",
        reason: "matter 7",
        createdBy: "counsel",
        until: null,
        active: true,
      }),
    ]);

    const status = await cli("status", "--json");
    expect(status.status, status.stderr).toBe(0);
    const report = JSON.parse(status.stdout) as StatusReport;
    expect(report.retention.activeHolds.map((h) => h.holdId)).toEqual([id]);
    expect(report.retention.heldSessions).toBe(1);
    const text = await cli("status");
    expect(text.stdout).toMatch(/Legal holds/);
    expect(text.stdout).toContain("1 session held from deletion");

    const release = await cli(
      "hold",
      "release",
      id,
      "--reason",
      "closed",
      "--by",
      "counsel",
    );
    expect(release.status, release.stderr).toBe(0);
    expect(release.stdout).toContain(
      `${id} released by counsel; 1 stored session row no longer held`,
    );
    expect((await cli("hold", "list")).stdout).toBe("no active legal holds\n");
    const all = await cli("hold", "list", "--all", "--json");
    expect(JSON.parse(all.stdout)).toEqual([
      expect.objectContaining({
        holdId: id,
        releasedBy: "counsel",
        releaseReason: "closed",
        active: false,
      }),
    ]);
    const again = await cli("hold", "release", id, "--reason", "twice");
    expect(again.status).toBe(2);
    expect(again.stderr).toMatch(/was released already/);
  });

  it("refuses bad input with exit 2 and what to do", async () => {
    const two = await cli(
      "hold",
      "add",
      "--user",
      "a",
      "--resource",
      "b",
      "--reason",
      "r",
    );
    expect(two.status).toBe(2);
    expect(two.stderr).toMatch(
      /give exactly one of --user, --resource or --session/,
    );
    const past = await cli(
      "hold",
      "add",
      "--session",
      "s1",
      "--reason",
      "r",
      "--until",
      "-1d",
    );
    expect(past.status).toBe(2);
    expect(past.stderr).toMatch(/--until is not in the future/);
    const empty = await cli("hold", "add", "--session", "s1", "--reason", " ");
    expect(empty.status).toBe(2);
    const none = await cli("hold", "release", "hold_nope", "--reason", "r");
    expect(none.status).toBe(2);
    expect(none.stderr).toMatch(/there is no hold hold_nope/);
  });
});
