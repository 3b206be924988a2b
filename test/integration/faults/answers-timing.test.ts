// Timeouts that mean what they say and bodies with limits: the request timeout covers waiting
// for the answer, not a reader that takes its time; a body that stalls is retried; a page past
// its size limit fails clearly; a record past its limit, or not UTF-8, is a dead letter.
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ControlPlaneClient } from "../../../src/api/client.js";
import { ControlPlaneApi } from "../../../src/api/control-plane.js";
import type { Simulator } from "../../../src/simulator/index.js";
import { readSessions } from "../../helpers/expected.js";
import { NOON, testSimulator } from "../../helpers/simulator.js";
import { scriptedServer } from "../../helpers/servers.js";
import { answer, FROM, HOUR, syncAgainst } from "../../helpers/sync-fixture.js";

let sim: Simulator;
let sessions: Record<string, unknown>[];
const idOf = (s: Record<string, unknown>) => s.id as string;

beforeAll(async () => {
  sim = await testSimulator();
  sessions = [...(await readSessions(sim, NOON - 2 * HOUR, NOON)).values()];
});
afterAll(async () => {
  await sim.close();
});

const pageOf = (records: readonly Record<string, unknown>[]) =>
  JSON.stringify({
    sessions: records,
    listMetadata: { count: records.length },
  });

describe("timeouts", () => {
  it("a reader slower than the request timeout still reads the whole page", async () => {
    // Large enough that the body is still on the wire while the reader works.
    const records = sessions
      .slice(0, 6)
      .map((r) => ({ ...r, pad: "p".repeat(400_000) }));
    const server = await scriptedServer((_n, _req, res) =>
      answer(res, pageOf(records)),
    );
    const api = new ControlPlaneApi(
      new ControlPlaneClient({
        url: server.url,
        apiKey: "k-timing-test",
        // Long enough for the headers on a loaded machine; the reader below still takes
        // longer than this in all.
        requestTimeoutMs: 1_500,
        bodyIdleTimeoutMs: 1_500,
        maxRequestsPerSecond: 1000,
        maxRetries: 0,
        retryBaseMs: 1,
        retryMaxMs: 5,
      }),
      "unix",
    );
    try {
      const got: string[] = [];
      const page = api.sessionsPage(
        { startMs: FROM, endMs: NOON, limit: 10 },
        { batchSize: 1 },
      );
      for await (const batch of page) {
        // Six batches take longer than the request timeout.
        await sleep(400);
        for (const e of batch)
          got.push(
            Buffer.isBuffer(e)
              ? e.toString("utf8")
              : "value" in e
                ? e.bytes.toString("utf8")
                : e.problem,
          );
      }
      expect(
        got.map((t) => idOf(JSON.parse(t) as Record<string, unknown>)),
      ).toEqual(records.map(idOf));
    } finally {
      await api.close();
      await server.close();
    }
  });

  it("a reader that stops early frees the connection for the next request", async () => {
    const records = sessions
      .slice(0, 6)
      .map((r) => ({ ...r, pad: "p".repeat(400_000) }));
    const server = await scriptedServer((_n, _req, res) =>
      answer(res, pageOf(records)),
    );
    const api = new ControlPlaneApi(
      new ControlPlaneClient({
        url: server.url,
        apiKey: "k-timing-test",
        // Longer than the test's timeout: a connection still held by the abandoned body would
        // keep the second read waiting until the test fails.
        requestTimeoutMs: 600_000,
        maxRequestsPerSecond: 1000,
        maxRetries: 0,
        retryBaseMs: 1,
        retryMaxMs: 5,
        connections: 1,
      }),
      "unix",
    );
    try {
      const req = { startMs: FROM, endMs: NOON, limit: 10 };
      for await (const batch of api.sessionsPage(req, { batchSize: 1 })) {
        expect(batch).toHaveLength(1);
        break;
      }
      let n = 0;
      for await (const batch of api.sessionsPage(req, { batchSize: 100 }))
        n += batch.length;
      expect(n).toBe(6);
      expect(server.requests).toHaveLength(2);
    } finally {
      await api.close();
      await server.close();
    }
  }, 20_000);

  it("an answer whose headers come later than the request timeout is a TIMEOUT", async () => {
    const server = await scriptedServer((_n, _req, res) => {
      setTimeout(() => answer(res, pageOf([])), 600).unref();
    });
    const client = new ControlPlaneClient({
      url: server.url,
      apiKey: "k-timing-test",
      requestTimeoutMs: 200,
      maxRequestsPerSecond: 1000,
      maxRetries: 0,
      retryBaseMs: 1,
      retryMaxMs: 5,
    });
    try {
      const err = await client
        .call("SessionsService/GetSession", { sessionId: "s" })
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ code: "TIMEOUT" });
      expect((err as Error).message).toMatch(/no answer within 200 ms/);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("a body that stops sending is retried after the body idle timeout, and the sync completes", async () => {
    const records = sessions.slice(0, 4);
    const body = pageOf(records);
    const o = await syncAgainst(
      (n, _req, res) => {
        if (n === 0) {
          // Headers and half the body, then nothing (the connection stays open).
          res.writeHead(200, { "content-type": "application/json" });
          res.write(body.slice(0, body.length >> 1));
          return;
        }
        answer(res, body);
      },
      { env: { SESSIONHOUSE_BODY_IDLE_TIMEOUT: "300ms" } },
    );
    expect(o.error).toBeUndefined();
    expect(o.requests).toHaveLength(2);
    expect([...o.rows.keys()].sort()).toEqual(records.map(idOf).sort());
    expect(o.checkpoints).toBeGreaterThan(0);
  }, 20_000);
});

describe("size limits", () => {
  it("a page past SESSIONHOUSE_MAX_PAGE_BYTES fails with RESPONSE_TOO_LARGE and what to change", async () => {
    const body = pageOf(sessions.slice(0, 20));
    const o = await syncAgainst((_n, _req, res) => answer(res, body), {
      env: { SESSIONHOUSE_MAX_PAGE_BYTES: "4096" },
    });
    expect(o.error?.code).toBe("RESPONSE_TOO_LARGE");
    expect(o.error?.message).toMatch(/larger than 4096 bytes/);
    expect(o.error?.message).toContain(new Date(FROM).toISOString());
    expect(o.error?.hint).toMatch(/SESSIONHOUSE_MAX_PAGE_BYTES/);
    // Not retried: the same request brings the same page.
    expect(o.requests).toHaveLength(1);
    expect(o.checkpoints).toBe(0);
  });

  it("a record past SESSIONHOUSE_MAX_RECORD_BYTES is a dead letter keeping its first 1 MiB; the others are stored", async () => {
    const [a, b, c] = sessions as [
      Record<string, unknown>,
      Record<string, unknown>,
      Record<string, unknown>,
    ];
    const huge = { ...b, notes: "n".repeat(3 * 2 ** 20) };
    const hugeText = JSON.stringify(huge);
    const o = await syncAgainst(
      (_n, _req, res) => answer(res, pageOf([a, huge, c])),
      { env: { SESSIONHOUSE_MAX_RECORD_BYTES: String(2 * 2 ** 20) } },
    );
    expect(o.error).toBeUndefined();
    expect([...o.rows.keys()].sort()).toEqual([idOf(a), idOf(c)].sort());
    expect(o.dead).toHaveLength(1);
    expect(o.dead[0]?.reason).toMatch(
      new RegExp(
        `record of ${hugeText.length} bytes is larger than SESSIONHOUSE_MAX_RECORD_BYTES`,
      ),
    );
    expect(o.dead[0]?.raw).toBe(hugeText.slice(0, 2 ** 20));
  });

  it("a record that is not valid UTF-8 is a dead letter holding its exact bytes as base64", async () => {
    const [a, b, c] = sessions as [
      Record<string, unknown>,
      Record<string, unknown>,
      Record<string, unknown>,
    ];
    const marker = "@@BAD@@";
    const broken = Buffer.from(
      JSON.stringify({ ...b, user_note: marker }),
      "utf8",
    );
    // Replace the marker with bytes that are not UTF-8 (a lone continuation byte, a cut sequence).
    const at = broken.indexOf(marker);
    const bad = Buffer.concat([
      broken.subarray(0, at),
      Buffer.from([0x41, 0x80, 0xc3, 0x28, 0xff]),
      broken.subarray(at + marker.length),
    ]);
    const body = Buffer.concat([
      Buffer.from(`{"sessions":[${JSON.stringify(a)},`),
      bad,
      Buffer.from(`,${JSON.stringify(c)}],"listMetadata":{"count":3}}`),
    ]);
    const o = await syncAgainst((_n, _req, res) => answer(res, body));
    expect(o.error).toBeUndefined();
    expect([...o.rows.keys()].sort()).toEqual([idOf(a), idOf(c)].sort());
    expect(o.dead).toHaveLength(1);
    expect(o.dead[0]?.reason).toMatch(/invalid UTF-8, raw is base64/);
    expect(Buffer.from(o.dead[0]?.raw ?? "", "base64").equals(bad)).toBe(true);
  });
});
