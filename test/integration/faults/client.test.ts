// The API client against scripted servers: how many tries each failure gets, what the server's
// waits do, the request-rate ceiling, a refused key, and TLS with a private CA.
import { monitorEventLoopDelay } from "node:perf_hooks";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  ControlPlaneClient,
  type ApiClientOptions,
} from "../../../src/api/client.js";
import { ControlPlaneApi } from "../../../src/api/control-plane.js";
import { ApiError } from "../../../src/api/errors.js";
import { RetryBudget } from "../../../src/api/retry.js";
import { ConfigError } from "../../../src/config/index.js";
import { sessionWindowBatches } from "../../../src/sources/session-pages.js";
import {
  connectError,
  hasOpenssl,
  makeCertificates,
  maxInWindow,
  ok,
  scriptedServer,
  type TestServer,
} from "../../helpers/servers.js";

const PROC = "SessionsService/ListSessionsV2";
let servers: TestServer[] = [];
let clients: ControlPlaneClient[] = [];

afterEach(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
  clients = [];
});

function client(
  url: string,
  over: Partial<ApiClientOptions> = {},
): ControlPlaneClient {
  const c = new ControlPlaneClient({
    url,
    apiKey: "client-test-key",
    requestTimeoutMs: 5_000,
    maxRequestsPerSecond: 1_000,
    maxRetries: 6,
    retryBaseMs: 1,
    retryMaxMs: 5,
    ...over,
  });
  clients.push(c);
  return c;
}

async function serve(
  script: Parameters<typeof scriptedServer>[0],
): Promise<TestServer> {
  const s = await scriptedServer(script);
  servers.push(s);
  return s;
}

const failure = async (p: Promise<unknown>): Promise<ApiError> => {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ApiError);
  return e as ApiError;
};

/**
 * Slack for arrival times that jitter on their way through the sockets of a loaded machine:
 * less than the 40 ms between two requests at the highest rate tested (25/s), so one request a
 * second too many still fails.
 */
const WIRE_JITTER_MS = 35;

describe("retries", () => {
  it("gives one request at most maxRetries retries, then fails saying so", async () => {
    const s = await serve((_n, _r, res) =>
      connectError(res, 503, "unavailable", "down for maintenance"),
    );
    const e = await failure(
      client(s.url, { maxRetries: 2 }).call(
        PROC,
        {},
        { budget: new RetryBudget(100) },
      ),
    );
    expect(s.requests).toHaveLength(3);
    expect(e.code).toBe("unavailable");
    expect(e.message).toMatch(
      /down for maintenance \(gave up after 3 tries: at most 2 retries per request\)/,
    );
  });

  it("shares one budget between every request of a run", async () => {
    const s = await serve((_n, _r, res) =>
      connectError(res, 503, "unavailable", "down"),
    );
    const c = client(s.url, { maxRetries: 10 });
    const budget = new RetryBudget(3);
    await failure(c.call(PROC, {}, { budget }));
    expect(s.requests).toHaveLength(4);
    const e = await failure(c.call(PROC, {}, { budget }));
    expect(s.requests).toHaveLength(5);
    expect(e.message).toMatch(/retry budget of 3 retries is spent/);
    expect(e.hint).toMatch(/next run resumes/);
    expect(budget.spent).toBe(3);
  });

  it("retries a proxy's HTML 502, a 503, a cut body, bad JSON and a timeout, then succeeds", async () => {
    const s = await serve((n, _r, res) => {
      if (n === 0) {
        res.writeHead(502, { "content-type": "text/html" });
        res.end("<html><body><h1>502 Bad Gateway</h1></body></html>");
      } else if (n === 1) connectError(res, 503, "unavailable", "busy");
      else if (n === 2) {
        res.writeHead(200, {
          "content-type": "application/json",
          "content-length": "100",
        });
        res.write('{"sessions":[{"id":"a"}', () => res.socket?.destroy());
      } else if (n === 3) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end('{"sessions":[');
      } else if (n === 4) {
        // No answer: the client's timeout ends the attempt.
      } else ok(res, { done: true });
    });
    const retries: string[] = [];
    const c = client(s.url, {
      // Long enough for an answer on a loaded machine; attempt 4 waits it out.
      requestTimeoutMs: 1_500,
      observer: { onRetry: (e) => retries.push(e.code) },
    });
    await expect(
      c.call(PROC, {}, { budget: new RetryBudget(10) }),
    ).resolves.toEqual({ done: true });
    expect(retries).toEqual([
      "HTTP_502",
      "unavailable",
      "BODY_CUT",
      "BAD_RESPONSE",
      "TIMEOUT",
    ]);
  });

  it("fails at once, with what to fix, on invalid_argument, unauthenticated, permission_denied and not_found", async () => {
    const cases = [
      ["invalid_argument", 400, /setting/],
      ["unauthenticated", 401, /SESSIONHOUSE_API_KEY/],
      ["permission_denied", 403, /permission/],
      ["not_found", 404, /SESSIONHOUSE_API_URL/],
    ] as const;
    for (const [code, status, hint] of cases) {
      const s = await serve((_n, _r, res) =>
        connectError(res, status, code, `refused: ${code}`),
      );
      const e = await failure(
        client(s.url).call(PROC, {}, { budget: new RetryBudget(10) }),
      );
      expect(s.requests, code).toHaveLength(1);
      expect(e.code).toBe(code);
      expect(e.message).toContain(`refused: ${code}`);
      expect(e.hint).toMatch(hint);
    }
  });

  it("asks no more once the key was refused: the rest of the run fails without a request", async () => {
    const s = await serve((_n, _r, res) =>
      connectError(res, 401, "unauthenticated", "invalid API key"),
    );
    const c = client(s.url);
    const budget = new RetryBudget(10);
    const results = await Promise.allSettled(
      [1, 2, 3, 4, 5].map(() => c.call(PROC, {}, { budget })),
    );
    // Calls already on the wire when the refusal came may arrive; none starts after it.
    const sequential = await Promise.allSettled(
      [6, 7, 8].map(() => c.call(PROC, {}, { budget })),
    );
    expect(results.every((r) => r.status === "rejected")).toBe(true);
    expect(sequential.every((r) => r.status === "rejected")).toBe(true);
    expect(s.requests.length).toBeLessThanOrEqual(5);
    const before = s.requests.length;
    await failure(c.call(PROC, {}, { budget }));
    expect(s.requests.length).toBe(before);
    // A new run (a new budget) asks again: the key may have been fixed by then.
    await failure(c.call(PROC, {}, { budget: new RetryBudget(10) }));
    expect(s.requests.length).toBe(before + 1);
  });

  it("retries an error answer cut off before its end (the connection reset after the headers), then succeeds", async () => {
    const s = await serve((n, _r, res) => {
      if (n === 0) {
        // A not_found announced with its length, the connection gone before any of the body.
        res.writeHead(404, {
          "content-type": "application/json",
          "content-length": "60",
        });
        res.flushHeaders();
        setTimeout(() => res.socket?.destroy(), 20);
      } else ok(res, { done: true });
    });
    const retries: string[] = [];
    const c = client(s.url, {
      observer: { onRetry: (e) => retries.push(e.code) },
    });
    await expect(
      c.call(PROC, {}, { budget: new RetryBudget(10) }),
    ).resolves.toEqual({ done: true });
    expect(retries).toEqual(["BODY_CUT"]);
  });

  it("does not retry a 404 from something that is not the API, and says to check the URL", async () => {
    const s = await serve((_n, _r, res) => {
      res.writeHead(404, { "content-type": "text/html" });
      res.end("<h1>Not Found</h1>");
    });
    const e = await failure(client(s.url).call(PROC, {}, {}));
    expect(s.requests).toHaveLength(1);
    expect(e.code).toBe("HTTP_404");
    expect(e.hint).toMatch(/SESSIONHOUSE_API_URL/);
  });
});

describe("the service's waits", () => {
  it("obeys Retry-After even when its own backoff would be shorter", async () => {
    const s = await serve((n, _r, res) =>
      n === 0
        ? connectError(res, 429, "resource_exhausted", "slow down", {
            "retry-after": "1",
          })
        : ok(res, {}),
    );
    await client(s.url).call(PROC, {}, {});
    const [first, second] = s.requests;
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(990);
  });

  it("obeys X-Ratelimit-Reset when nothing remains", async () => {
    let resetS = 0;
    const s = await serve((n, _r, res) => {
      if (n > 0) return ok(res, {});
      resetS = Math.ceil(Date.now() / 1000) + 1;
      connectError(res, 429, "resource_exhausted", "limit", {
        "x-ratelimit-limit": "100",
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset": String(resetS),
      });
    });
    const sent = Date.now();
    await client(s.url).call(PROC, {}, {});
    const waited = s.requests[1]!.at - s.requests[0]!.at;
    expect(waited).toBeGreaterThanOrEqual(resetS * 1000 - sent - 30);
  });

  it("holds every request of the client while a server's wait runs, not only the refused one", async () => {
    const s = await serve((n, _r, res) =>
      n === 0
        ? connectError(res, 429, "resource_exhausted", "slow down", {
            "retry-after": "1",
          })
        : ok(res, {}),
    );
    const c = client(s.url);
    let other: Promise<unknown> | undefined;
    const first = c.call(PROC, {}, {});
    const started = performance.now();
    // Once the refusal is seen, another call of the same client must wait too.
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (s.requests.length >= 1) {
          clearInterval(poll);
          setTimeout(() => {
            other = c.call(PROC, {}, {});
            resolve();
          }, 50);
        }
      }, 5);
    });
    await Promise.all([first, other]);
    expect(s.requests).toHaveLength(3);
    for (const r of s.requests.slice(1))
      expect(r.at - started).toBeGreaterThanOrEqual(950);
  });

  it("slows down before it is refused when X-Ratelimit-Remaining runs low", async () => {
    const s = await serve((_n, _r, res) =>
      ok(
        res,
        {},
        {
          "x-ratelimit-limit": "100",
          "x-ratelimit-remaining": "2",
          "x-ratelimit-reset": String(Math.ceil(Date.now() / 1000) + 2),
        },
      ),
    );
    const c = client(s.url);
    await c.call(PROC, {}, {});
    await c.call(PROC, {}, {});
    // Two requests left for at least a second: they are spread, about half the window apart.
    expect(s.requests[1]!.at - s.requests[0]!.at).toBeGreaterThanOrEqual(400);
  });

  it("never exceeds the configured requests per second, retries and concurrency included", async () => {
    const s = await serve((n, _r, res) =>
      n % 4 === 3 ? connectError(res, 503, "unavailable", "busy") : ok(res, {}),
    );
    const rps = 25;
    const c = client(s.url, { maxRequestsPerSecond: rps, connections: 8 });
    const lag = monitorEventLoopDelay({ resolution: 10 });
    lag.enable();
    const started = performance.now();
    await Promise.all(
      Array.from({ length: 60 }, () =>
        c.call(PROC, {}, { budget: new RetryBudget(100) }),
      ),
    );
    lag.disable();
    const arrivals = s.requests.map((r) => r.at);
    expect(arrivals.length).toBeGreaterThanOrEqual(75);
    // An arrival is stamped when the server's handler runs on this process's event loop: a loop
    // that fell behind by more than the slack stamps requests sent apart as if sent together.
    const slack = Math.max(WIRE_JITTER_MS, lag.max / 1e6);
    expect(maxInWindow(arrivals, 1000 - slack)).toBeLessThanOrEqual(rps);
    expect(performance.now() - started).toBeGreaterThanOrEqual(
      ((arrivals.length - 1) * 1000) / rps - 50,
    );
  });
});

describe("the ceiling at the wire", () => {
  it("holds when the event loop was blocked: timers that fire late do not fire together", async () => {
    const s = await serve((_n, _r, res) => ok(res, {}));
    const rps = 10;
    const c = client(s.url, { maxRequestsPerSecond: rps, connections: 16 });
    const calls = Array.from({ length: 25 }, () => c.call(PROC, {}, {}));
    // Busy for 700 ms: every request timed meanwhile is due at once when the loop comes back.
    const until = performance.now() + 700;
    while (performance.now() < until) {
      // spin
    }
    await Promise.all(calls);
    expect(
      maxInWindow(
        s.requests.map((r) => r.at),
        1000 - WIRE_JITTER_MS,
      ),
    ).toBeLessThanOrEqual(rps);
  });

  it("holds when every connection is busy: a request waits for a connection before it is timed", async () => {
    // The first two requests are answered late; the others queue behind them.
    const s = await serve((n, _r, res) => {
      if (n < 2) setTimeout(() => ok(res, {}), 1_500);
      else ok(res, {});
    });
    const rps = 4;
    const c = client(s.url, { maxRequestsPerSecond: rps, connections: 2 });
    await Promise.all(Array.from({ length: 10 }, () => c.call(PROC, {}, {})));
    expect(s.requests).toHaveLength(10);
    expect(
      maxInWindow(
        s.requests.map((r) => r.at),
        1000 - WIRE_JITTER_MS,
      ),
    ).toBeLessThanOrEqual(rps);
  });

  it("gives the connection back when a reader abandons a window in the middle of a page", async () => {
    const sessions = Array.from({ length: 2_000 }, (_, i) => ({
      id: `s${i}`,
      pad: "x".repeat(200),
    }));
    const s = await serve((_n, _r, res) =>
      ok(res, { sessions, listMetadata: {} }),
    );
    // Longer than the test's timeout: a connection still held by the abandoned body would
    // keep the next call waiting until the test fails.
    const c = client(s.url, { connections: 1, requestTimeoutMs: 600_000 });
    const api = new ControlPlaneApi(c, "unix");
    // The reader stops after the first batch (say its insert failed).
    for await (const batch of sessionWindowBatches(
      api,
      { startMs: 0, endMs: 1_000 },
      { pageSize: 5_000, batchSize: 10, maxStalledPages: 3 },
    )) {
      expect(batch.records).toHaveLength(10);
      break;
    }
    await c.call(PROC, {}, {});
    expect(s.requests).toHaveLength(2);
  });
});

describe.runIf(hasOpenssl)("TLS with a private CA", () => {
  it("trusts the CA in caFile, and without it fails at once with a hint instead of retrying", async () => {
    const { caFile, key, cert } = makeCertificates();
    let hits = 0;
    const server = createHttpsServer({ key, cert }, (req, res) => {
      hits++;
      req.resume();
      req.on("end", () => ok(res, { secure: true }));
    });
    await new Promise<void>((resolve) =>
      server.listen(0, "127.0.0.1", resolve),
    );
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      await expect(client(url, { caFile }).call(PROC, {}, {})).resolves.toEqual(
        { secure: true },
      );
      expect(hits).toBe(1);
      const retries: string[] = [];
      const e = await failure(
        client(url, {
          observer: { onRetry: (r) => retries.push(r.code) },
        }).call(PROC, {}, {}),
      );
      expect(e.code).toBe("TLS");
      expect(e.hint).toMatch(/SESSIONHOUSE_API_CA_FILE/);
      expect(retries).toEqual([]);
      expect(hits).toBe(1);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

it("reports a CA file that cannot be read as a configuration error", () => {
  expect(() =>
    client("https://127.0.0.1:1", { caFile: "/nonexistent/ca.pem" }),
  ).toThrow(ConfigError);
  expect(() =>
    client("https://127.0.0.1:1", { caFile: "/nonexistent/ca.pem" }),
  ).toThrow(/SESSIONHOUSE_API_CA_FILE/);
});
