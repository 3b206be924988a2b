// The pacing of the API client on its own: the spacing the service's X-Ratelimit-* headers
// impose, the hold a server's wait puts on every request, the even request slots, and the
// connection slots a request waits for. A hand-driven clock stands in for performance.now().
import { describe, expect, it } from "vitest";
import {
  MAX_SERVER_WAIT_MS,
  Pacer,
  rateLimitSpacingMs,
} from "../../../src/api/pacing.js";

const NOW = Date.UTC(2026, 10, 2, 10, 0, 0);
const resetIn = (seconds: number) => String(NOW / 1000 + seconds);

describe("rateLimitSpacingMs", () => {
  it("spreads what is left of the window once a tenth or less remains", () => {
    const headers = {
      "x-ratelimit-limit": "100",
      "x-ratelimit-remaining": "5",
      "x-ratelimit-reset": resetIn(10),
    };
    expect(rateLimitSpacingMs(headers, NOW)).toBe(2_000);
  });

  it("waits for the reset when nothing remains, at most MAX_SERVER_WAIT_MS", () => {
    const spent = (seconds: number) => ({
      "x-ratelimit-limit": "100",
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": resetIn(seconds),
    });
    expect(rateLimitSpacingMs(spent(30), NOW)).toBe(30_000);
    expect(rateLimitSpacingMs(spent(3 * 3600), NOW)).toBe(MAX_SERVER_WAIT_MS);
  });

  it("leaves the pace alone while the limit is far, or when a header is missing or garbled", () => {
    const base = {
      "x-ratelimit-limit": "100",
      "x-ratelimit-remaining": "11",
      "x-ratelimit-reset": resetIn(10),
    };
    expect(rateLimitSpacingMs(base, NOW)).toBeUndefined();
    expect(
      rateLimitSpacingMs(
        {
          ...base,
          "x-ratelimit-remaining": "1",
          "x-ratelimit-limit": undefined,
        },
        NOW,
      ),
    ).toBeUndefined();
    expect(
      rateLimitSpacingMs(
        { ...base, "x-ratelimit-remaining": "1", "x-ratelimit-reset": "soon" },
        NOW,
      ),
    ).toBeUndefined();
    expect(
      rateLimitSpacingMs(
        { ...base, "x-ratelimit-remaining": "1", "x-ratelimit-limit": "0" },
        NOW,
      ),
    ).toBeUndefined();
    expect(rateLimitSpacingMs({}, NOW)).toBeUndefined();
  });
});

describe("Pacer", () => {
  const clock = () => {
    const c = { t: 1_000, now: () => c.t };
    return c;
  };

  it("gives out request slots 1000 / maxRequestsPerSecond ms apart", async () => {
    const c = clock();
    const pacer = new Pacer({
      maxRequestsPerSecond: 4,
      connections: 1,
      now: c.now,
    });
    const signal = new AbortController().signal;
    await pacer.throttle(signal);
    expect(pacer.nextSlotMs).toBe(1_250);
    c.t = 1_250;
    await pacer.throttle(signal);
    expect(pacer.nextSlotMs).toBe(1_500);
    // A request after a quiet spell starts from now, not from the old slot.
    c.t = 9_000;
    await pacer.throttle(signal);
    expect(pacer.nextSlotMs).toBe(9_250);
  });

  it("holds every later request for a server's wait, and never pulls a hold back", () => {
    const c = clock();
    const pacer = new Pacer({
      maxRequestsPerSecond: 10,
      connections: 1,
      now: c.now,
    });
    pacer.holdFor(5_000);
    expect(pacer.nextSlotMs).toBe(6_000);
    pacer.holdFor(1_000);
    expect(pacer.nextSlotMs).toBe(6_000);
  });

  it("holds for the spacing an answer's X-Ratelimit-* headers ask", () => {
    const c = clock();
    const pacer = new Pacer({
      maxRequestsPerSecond: 10,
      connections: 1,
      now: c.now,
    });
    const resetAt = String(Math.floor(Date.now() / 1000) + 100);
    pacer.observe({
      "x-ratelimit-limit": "100",
      "x-ratelimit-remaining": "50",
      "x-ratelimit-reset": resetAt,
    });
    expect(pacer.nextSlotMs).toBe(0);
    pacer.observe({
      "x-ratelimit-limit": "100",
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": resetAt,
    });
    expect(pacer.nextSlotMs).toBeGreaterThan(c.t + 90_000);
    expect(pacer.nextSlotMs).toBeLessThanOrEqual(c.t + 100_000);
  });

  it("lets as many requests hold a connection as there are connections; the next waits for a release", async () => {
    const pacer = new Pacer({ maxRequestsPerSecond: 10, connections: 2 });
    const signal = new AbortController().signal;
    const first = await pacer.acquire(signal);
    await pacer.acquire(signal);
    expect(pacer.inFlight).toBe(2);
    let third = false;
    const waiting = pacer.acquire(signal).then((release) => {
      third = true;
      return release;
    });
    await Promise.resolve();
    expect(third).toBe(false);
    first();
    first(); // a release is given back once, however often it is called
    const release = await waiting;
    expect(third).toBe(true);
    expect(pacer.inFlight).toBe(2);
    release();
    expect(pacer.inFlight).toBe(1);
  });

  it("gives up waiting for a connection when the call is cancelled", async () => {
    const pacer = new Pacer({ maxRequestsPerSecond: 10, connections: 1 });
    const held = await pacer.acquire(new AbortController().signal);
    const cancel = new AbortController();
    const waiting = pacer.acquire(cancel.signal);
    cancel.abort(new Error("run cancelled"));
    await expect(waiting).rejects.toThrow("run cancelled");
    held();
    expect(pacer.inFlight).toBe(0);
    // The cancelled waiter is gone: the next one gets the connection.
    const next = await pacer.acquire(new AbortController().signal);
    expect(pacer.inFlight).toBe(1);
    next();
  });
});
