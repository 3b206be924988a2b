// /readyz tells the truth at once when the control plane cannot be reached, refuses the key or
// fails TLS: those do not pass by themselves, unlike a 5xx, which only an overdue job reports.
import { describe, expect, it } from "vitest";
import {
  ApiError,
  apiTrouble,
  transportError,
} from "../../../src/api/errors.js";
import { checkReadiness } from "../../../src/ops/readiness.js";
import type { JobState } from "../../../src/scheduler/scheduler.js";
import { FatalError } from "../../../src/util/errors.js";

const NOW = Date.UTC(2026, 10, 28, 12);
const live = new AbortController().signal;
const ctx = {
  origin: "https://api.example",
  requestTimeoutMs: 1_000,
  bodyIdleTimeoutMs: 1_000,
};
const failed = (code: string) =>
  transportError(
    Object.assign(new Error(code), { code }),
    "SessionsService/ListSessionsV2",
    live,
    ctx,
  );
const answered = (
  code: "unauthenticated" | "unavailable",
  httpStatus: number,
) =>
  new ApiError({
    code,
    httpStatus,
    procedure: "SessionsService/ListSessionsV2",
    message: "m",
  });

function job(err: unknown): JobState {
  return {
    job: "sessions",
    schedule: "* * * * *",
    deadlineMs: 3_600_000,
    phase: "idle",
    runs: 1,
    skippedTicks: 0,
    lastStartMs: NOW - 5_000,
    lastEndMs: NOW - 1_000,
    lastSuccessMs: undefined,
    lastError: String(err),
    lastApiTrouble: apiTrouble(err),
    nextRunMs: NOW + 60_000,
  };
}

async function readiness(err: unknown) {
  return checkReadiness({
    ping: () => Promise.resolve(true),
    jobs: () => [job(err)],
    startedAtMs: NOW - 10_000,
    stopping: () => false,
    nowMs: () => NOW,
  });
}

describe("readiness after one failed run", () => {
  it("is false at once for a refused connection, a refused key and TLS, saying which", async () => {
    for (const [err, words] of [
      [failed("ECONNREFUSED"), "the control plane cannot be reached"],
      [
        answered("unauthenticated", 401),
        "the control plane refuses the API key (unauthenticated, HTTP 401)",
      ],
      [failed("ERR_SSL_WRONG_VERSION_NUMBER"), "the control plane fails TLS"],
      // Wrapped by the job that failed: the cause is looked at.
      [
        new FatalError("PARENTS_FAILED", "x", { cause: failed("ENOTFOUND") }),
        "the control plane cannot be reached",
      ],
    ] as const) {
      const r = await readiness(err);
      expect(r.ready).toBe(false);
      expect(r.reasons.join("\n")).toContain(`job sessions: ${words}`);
    }
  });

  it("stays true for a 5xx or any other failure until the job is overdue", async () => {
    for (const err of [answered("unavailable", 503), new Error("a bug")]) {
      const r = await readiness(err);
      expect(r.reasons).toEqual([]);
      expect(r.ready).toBe(true);
    }
  });
});
