// Error mapping on its own: what an answer or a transport failure becomes, the one verdict per
// code (retry, refused, fatal) with its hint, and the retry decision that asks it.
import { describe, expect, it } from "vitest";
import { CONNECT_CODES } from "../../../src/api/connect-codes.js";
import {
  ApiError,
  classifyFailure,
  cutErrorAnswer,
  errorFromAnswer,
  transportError,
  type ApiErrorInit,
} from "../../../src/api/errors.js";
import { MAX_SERVER_WAIT_MS } from "../../../src/api/pacing.js";
import { RetryBudget, retryWaitMs } from "../../../src/api/retry.js";

const err = (code: ApiErrorInit["code"], extra: Partial<ApiErrorInit> = {}) =>
  new ApiError({
    code,
    httpStatus: 0,
    procedure: "S/M",
    message: "m",
    ...extra,
  });

const POLICY = { maxRetries: 3, retryBaseMs: 100, retryMaxMs: 1_000 };

describe("classifyFailure", () => {
  it("gives every Connect code a verdict: a refused key refuses the run, not_found only its call", () => {
    const verdicts = Object.fromEntries(
      CONNECT_CODES.map((c) => [c, classifyFailure(err(c))]),
    );
    expect(verdicts.unauthenticated).toBe("refused");
    expect(verdicts.permission_denied).toBe("refused");
    expect(verdicts.not_found).toBe("fatal");
    expect(verdicts.unavailable).toBe("retry");
    expect(Object.values(verdicts).filter((v) => v === "retry")).toHaveLength(
      6,
    );
  });

  it("judges a proxy's non-JSON answer by the Connect code its status stands for", () => {
    expect(classifyFailure(err("HTTP_401"))).toBe("refused");
    expect(classifyFailure(err("HTTP_403"))).toBe("refused");
    expect(classifyFailure(err("HTTP_599"))).toBe("retry");
    expect(classifyFailure(err("HTTP_418"))).toBe("fatal");
    // The same hint as the code it stands for.
    expect(err("HTTP_401").hint).toBe(err("unauthenticated").hint);
    expect(err("HTTP_405").hint).toBe(err("unimplemented").hint);
    // A 503 give-up says what to do: a rerun resumes from the checkpoint.
    expect(err("HTTP_502").hint).toMatch(/resumes from it/);
    expect(err("HTTP_503").hint).toBe(err("unavailable").hint);
  });

  it("calls anything that is not a failed call fatal", () => {
    expect(classifyFailure(new Error("ECONNRESET"))).toBe("fatal");
    expect(classifyFailure(undefined)).toBe("fatal");
  });
});

describe("mapping answers and transport failures", () => {
  it("reads a Connect error body, clips a long message and keeps the server's wait", () => {
    const e = errorFromAnswer(
      "S/M",
      503,
      { "retry-after": "7" },
      JSON.stringify({ code: "unavailable", message: "x".repeat(2_000) }),
    );
    expect(e.code).toBe("unavailable");
    expect(e.retryAfterMs).toBe(7_000);
    expect(e.detail).toMatch(/^x{500}… \(2000 chars\)$/);
  });

  it("turns a page that is not a Connect error into HTTP_<status>, also when it was too large to read", () => {
    const page = errorFromAnswer(
      "S/M",
      502,
      { "content-type": "text/html" },
      "<html>bad gateway</html>",
    );
    expect(page.code).toBe("HTTP_502");
    expect(page.message).toContain("unexpected text/html response (24 bytes)");
    expect(errorFromAnswer("S/M", 413, {}, undefined).code).toBe("HTTP_413");
  });

  it("makes an error answer cut off before its end a BODY_CUT, retried whatever its status", () => {
    const cut = cutErrorAnswer("S/M", 400, {}, new Error("socket hang up"));
    expect(cut.code).toBe("BODY_CUT");
    expect(classifyFailure(cut)).toBe("retry");
  });

  it("names a timeout, a cancellation, TLS and the network, with the origin", () => {
    const ctx = {
      origin: "https://api.example",
      requestTimeoutMs: 1_234,
      bodyIdleTimeoutMs: 60_000,
    };
    const live = new AbortController().signal;
    const tls = Object.assign(new Error("x"), {
      code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
    });
    expect(transportError(tls, "S/M", live, ctx).code).toBe("TLS");
    const refused = Object.assign(new Error("x"), { code: "ECONNREFUSED" });
    const network = transportError(refused, "S/M", live, ctx);
    expect([network.code, network.detail]).toEqual([
      "NETWORK",
      "cannot reach https://api.example (ECONNREFUSED)",
    ]);
    const timedOut = new AbortController();
    timedOut.abort(new DOMException("late", "TimeoutError"));
    expect(
      transportError(new Error("aborted"), "S/M", timedOut.signal, ctx).detail,
    ).toBe("no answer within 1234 ms");
    const cancelled = new AbortController();
    cancelled.abort();
    expect(
      transportError(new Error("aborted"), "S/M", cancelled.signal, ctx).code,
    ).toBe("ABORTED");
  });
});

describe("retryWaitMs", () => {
  it("waits at least what the server asked, below the backoff ceiling otherwise", () => {
    expect(
      retryWaitMs(
        err("unavailable", { retryAfterMs: 5_000 }),
        0,
        POLICY,
        undefined,
      ),
    ).toBeGreaterThanOrEqual(5_000);
    expect(retryWaitMs(err("unavailable"), 0, POLICY, undefined)).toBeLessThan(
      100,
    );
  });

  it("records a refusal in the run's budget and throws it at once", () => {
    const budget = new RetryBudget(10);
    const refused = err("unauthenticated");
    expect(() => retryWaitMs(refused, 0, POLICY, budget)).toThrow(refused);
    expect(budget.refusal).toBe(refused);
    expect(budget.spent).toBe(0);
  });

  it("throws a fatal failure and anything not a failed call as it is", () => {
    const fatal = err("invalid_argument");
    expect(() => retryWaitMs(fatal, 0, POLICY, undefined)).toThrow(fatal);
    const foreign = new Error("bug");
    expect(() => retryWaitMs(foreign, 0, POLICY, undefined)).toThrow(foreign);
  });

  it("gives up past the per-request limit, a server wait too long, or a spent budget, saying which", () => {
    expect(() => retryWaitMs(err("unavailable"), 3, POLICY, undefined)).toThrow(
      /gave up after 4 tries: at most 3 retries per request/,
    );
    expect(() =>
      retryWaitMs(
        err("unavailable", { retryAfterMs: MAX_SERVER_WAIT_MS + 1 }),
        0,
        POLICY,
        undefined,
      ),
    ).toThrow(/asked to wait 601 s before another try/);
    const budget = new RetryBudget(1);
    retryWaitMs(err("unavailable"), 0, POLICY, budget);
    expect(() => retryWaitMs(err("unavailable"), 0, POLICY, budget)).toThrow(
      /the run's retry budget of 1 retries is spent/,
    );
  });
});

describe("a person waiting on a command", () => {
  const ctx = {
    origin: "https://api.example",
    requestTimeoutMs: 1234,
    bodyIdleTimeoutMs: 1,
  };
  const live = new AbortController().signal;
  const failure = (code: string) =>
    transportError(Object.assign(new Error(code), { code }), "S/M", live, ctx);
  const PERSON = { ...POLICY, maxRetries: 6, personWaits: true };

  it("gets one short retry for a connection that cannot be made, then one message", () => {
    for (const code of ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN"]) {
      expect(retryWaitMs(failure(code), 0, PERSON, undefined)).toBe(100);
      expect(() => retryWaitMs(failure(code), 1, PERSON, undefined)).toThrow(
        /gave up after 2 tries: nothing answers there/,
      );
    }
  });

  it("while the service keeps retrying it, and a person still waits out a 5xx", () => {
    // Another try is a wait (the backoff's jitter may make it 0 ms), not the final error.
    expect(
      retryWaitMs(failure("ECONNREFUSED"), 1, POLICY, undefined),
    ).toBeGreaterThanOrEqual(0);
    expect(
      retryWaitMs(err("unavailable"), 3, PERSON, undefined),
    ).toBeGreaterThanOrEqual(0);
  });

  it("is told that https:// reached a plain HTTP server, not that a certificate is untrusted", () => {
    const notTls = failure("ERR_SSL_WRONG_VERSION_NUMBER");
    expect(notTls.code).toBe("TLS");
    expect(notTls.detail).toMatch(/^https:\/\/api.example does not speak TLS/);
    expect(notTls.hint).toMatch(/plain HTTP server: write http:\/\//);
    expect(classifyFailure(notTls)).toBe("fatal");
  });
});
