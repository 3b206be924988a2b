// Which jobs `run` starts at once instead of waiting for their tick: the sessions job always (it
// checks the key), every job that never succeeded, every job that missed a tick since its last
// success; the others wait for their schedule.
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/index.js";
import { dueAtStart, planJobs } from "../../../src/scheduler/jobs.js";

const NOW = Date.UTC(2026, 10, 28, 10, 0, 0);
const MINUTE = 60_000;
const config = loadConfig({
  env: {
    SESSIONHOUSE_API_URL: "https://cp.example.com",
    SESSIONHOUSE_API_KEY: "k-0123456789abcdef",
  },
});
const plans = planJobs(config);

describe("dueAtStart", () => {
  it("on a first start, every enabled job starts at once, sessions first", () => {
    const due = dueAtStart(plans, new Map(), NOW);
    expect(due.map((d) => d.job)).toEqual(plans.map((p) => p.name));
    expect(due[0]).toEqual({ job: "sessions", reason: "the key's check" });
    expect(due).toContainEqual({
      job: "native_users",
      reason: "never succeeded",
    });
  });

  it("after a short stop, only the sessions job and the jobs that missed a tick start at once", () => {
    // Every job succeeded two minutes ago, but native_users (daily at 02:41) last succeeded
    // two days ago, and detections (every minute) missed a tick.
    const last = new Map(plans.map((p) => [p.name, NOW - 2 * MINUTE]));
    last.set("native_users", NOW - 2 * 24 * 60 * MINUTE);
    last.set("users", NOW - 9 * MINUTE); // every 10 minutes: not missed yet
    const due = dueAtStart(plans, last, NOW);
    expect(due).toEqual([
      { job: "sessions", reason: "the key's check" },
      { job: "native_users", reason: "overdue" },
      { job: "detections", reason: "overdue" },
    ]);
  });
});
