// The pure half of fault handling: which failures are retried, how long the client waits, what a
// server's own wait does to it, and the per-run budget.
import { describe, expect, it } from "vitest";
import { CONNECT_CODES } from "../../../src/api/connect-codes.js";
import {
  ApiError,
  isRetryable,
  refusesEveryCall,
  type ApiErrorInit,
} from "../../../src/api/errors.js";
import { backoffMs } from "../../../src/util/backoff.js";
import { resetWaitMs, serverWaitMs } from "../../../src/api/pacing.js";
import { RetryBudget } from "../../../src/api/retry.js";

const err = (code: ApiErrorInit["code"], httpStatus = 0, message = "m") =>
  new ApiError({ code, httpStatus, procedure: "S/M", message });

describe("retry classification", () => {
  it("retries exactly the Connect codes the issue names, and no other", () => {
    const retried = CONNECT_CODES.filter((c) => isRetryable(err(c)));
    expect(retried.sort()).toEqual(
      [
        "aborted",
        "deadline_exceeded",
        "internal",
        "resource_exhausted",
        "unavailable",
        "unknown",
      ].sort(),
    );
    for (const code of [
      "invalid_argument",
      "unauthenticated",
      "permission_denied",
      "not_found",
    ] as const) {
      expect(isRetryable(err(code)), code).toBe(false);
    }
  });

  it("retries network errors, timeouts, cut bodies, bad JSON and non-JSON 5xx/429/408", () => {
    for (const code of [
      "NETWORK",
      "TIMEOUT",
      "BODY_CUT",
      "BAD_RESPONSE",
      "HTTP_502",
      "HTTP_503",
      "HTTP_500",
      "HTTP_504",
      "HTTP_429",
      "HTTP_408",
    ] as const) {
      expect(isRetryable(err(code)), code).toBe(true);
    }
  });

  it("does not retry a refused certificate, a cancelled call, a non-JSON 4xx or a foreign error", () => {
    for (const code of [
      "TLS",
      "ABORTED",
      "HTTP_400",
      "HTTP_401",
      "HTTP_403",
      "HTTP_404",
    ] as const) {
      expect(isRetryable(err(code)), code).toBe(false);
    }
    expect(isRetryable(new Error("ECONNRESET"))).toBe(false);
    expect(isRetryable("unavailable")).toBe(false);
  });

  it("treats a refused key as a refusal of every call of the run, a missing session not", () => {
    expect(refusesEveryCall(err("unauthenticated", 401))).toBe(true);
    expect(refusesEveryCall(err("permission_denied", 403))).toBe(true);
    expect(refusesEveryCall(err("HTTP_401", 401))).toBe(true);
    expect(refusesEveryCall(err("not_found", 404))).toBe(false);
    expect(refusesEveryCall(err("unavailable", 503))).toBe(false);
  });

  it("says what to fix for every error that is not retried", () => {
    expect(err("unauthenticated").hint).toMatch(/SESSIONHOUSE_API_KEY/);
    expect(err("permission_denied").hint).toMatch(/permission/);
    expect(err("not_found").hint).toMatch(/SESSIONHOUSE_API_URL/);
    expect(err("unimplemented").hint).toMatch(/SESSIONHOUSE_API_URL/);
    expect(err("HTTP_404").hint).toMatch(/SESSIONHOUSE_API_URL/);
    expect(err("invalid_argument").hint).toMatch(/setting/);
    expect(err("TLS").hint).toMatch(/SESSIONHOUSE_API_CA_FILE/);
  });

  it("keeps code, status and hint when it gives up, and says why", () => {
    const e = err("unavailable", 503, "try later").gaveUp(
      "gave up after 7 tries",
    );
    expect(e.code).toBe("unavailable");
    expect(e.httpStatus).toBe(503);
    expect(e.message).toBe(
      "S/M: unavailable (HTTP 503): try later (gave up after 7 tries)",
    );
    expect(e.cause).toBeInstanceOf(ApiError);
  });
});

describe("backoff with full jitter", () => {
  const opts = { baseMs: 500, maxMs: 30_000 };

  it("draws uniformly below an exponential ceiling that stops at maxMs", () => {
    expect(backoffMs(0, { ...opts, random: () => 0 })).toBe(0);
    expect(backoffMs(0, { ...opts, random: () => 0.999_999 })).toBe(499);
    expect(backoffMs(3, { ...opts, random: () => 0.999_999 })).toBe(3_999);
    expect(backoffMs(20, { ...opts, random: () => 0.999_999 })).toBe(29_999);
    expect(backoffMs(3, { ...opts, random: () => 0.5 })).toBe(2_000);
  });

  it("spreads concurrent clients: a thousand draws cover the range, none above it", () => {
    const draws = Array.from({ length: 1000 }, () => backoffMs(4, opts));
    expect(Math.max(...draws)).toBeLessThan(8_000);
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(0);
    expect(new Set(draws.map((d) => Math.floor(d / 1000))).size).toBe(8);
  });

  it("never waits less than the server asked", () => {
    expect(backoffMs(0, { ...opts, random: () => 0.9 }, 1_000)).toBe(1_000);
    expect(backoffMs(5, { ...opts, random: () => 0.9 }, 1_000)).toBe(14_400);
  });
});

describe("the server's own wait", () => {
  const now = Date.UTC(2026, 10, 16, 12);

  it("reads Retry-After as seconds or as an HTTP date", () => {
    expect(serverWaitMs({ "retry-after": "3" }, now)).toBe(3_000);
    expect(serverWaitMs({ "retry-after": "0.5" }, now)).toBe(500);
    expect(
      serverWaitMs({ "retry-after": new Date(now + 7_000).toUTCString() }, now),
    ).toBe(7_000);
    expect(serverWaitMs({ "retry-after": ["2", "9"] }, now)).toBe(2_000);
  });

  it("reads X-Ratelimit-Reset (Unix seconds) when nothing remains, and only then", () => {
    const reset = String(now / 1000 + 12);
    expect(
      serverWaitMs(
        { "x-ratelimit-reset": reset, "x-ratelimit-remaining": "0" },
        now,
      ),
    ).toBe(12_000);
    expect(
      serverWaitMs(
        { "x-ratelimit-reset": reset, "x-ratelimit-remaining": "40" },
        now,
      ),
    ).toBeUndefined();
    expect(serverWaitMs({}, now)).toBeUndefined();
  });

  it("takes a small reset value as seconds from now, never as an instant in 1970", () => {
    expect(resetWaitMs("30", now)).toBe(30_000);
    expect(resetWaitMs(String(now / 1000 - 5), now)).toBe(0);
    expect(resetWaitMs("soon", now)).toBeUndefined();
  });
});

describe("the per-run budget", () => {
  it("hands out exactly its total, counting what was spent", () => {
    const b = new RetryBudget(3);
    expect([b.take(), b.take(), b.take(), b.take()]).toEqual([
      true,
      true,
      true,
      false,
    ]);
    expect(b.spent).toBe(3);
    expect(b.exhausted).toBe(true);
    expect(new RetryBudget(0).take()).toBe(false);
  });

  it("remembers the first refusal of the key", () => {
    const b = new RetryBudget(3);
    const first = err("unauthenticated", 401, "first");
    b.refuse(first);
    b.refuse(err("unauthenticated", 401, "second"));
    expect(b.refusal).toBe(first);
  });
});
