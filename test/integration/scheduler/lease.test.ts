// The service lease on the real engine (src/scheduler/lease.ts over src/warehouse/lease.ts):
// one holder at a time, named to whoever is refused; a release frees it at once; a claim of
// another host is waited out until it expires; one of this host whose process is gone is
// taken over at once; two claims of the same moment end with one holder; a holder that finds
// an earlier tenure live has lost it; status shows the holder, then the last one.
import { spawn } from "node:child_process";
import { hostname } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/index.js";
import { collectStatus } from "../../../src/ops/status.js";
import { ServiceLease } from "../../../src/scheduler/lease.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { readLease, writeLease } from "../../../src/warehouse/lease.js";
import { memoryLogger } from "../../helpers/logs.js";
import { migratedWarehouse, testConfig } from "../../helpers/warehouse.js";

let config: Config;
let w: Warehouse;
const leases: ServiceLease[] = [];

beforeAll(async () => {
  config = await testConfig();
  w = await migratedWarehouse(config);
}, 120_000);

afterAll(async () => {
  for (const l of leases) await l.release();
  await w?.close();
});

const TTL_MS = 1500;

function lease(command = "run") {
  const log = memoryLogger();
  const l = new ServiceLease({
    warehouse: w,
    logger: log.logger,
    command,
    ttlMs: TTL_MS,
    renewMs: 200,
  });
  leases.push(l);
  return { lease: l, log };
}

/** Ends whatever holds the lease now (a release row for every live owner). */
async function clear(): Promise<void> {
  for (const l of leases.splice(0)) await l.release();
  const { owners } = await readLease(w);
  for (const o of owners)
    if (!o.released)
      await writeLease(w, {
        ...o,
        acquiredAtMs: "now",
        ttlMs: 0,
        released: true,
      });
}

async function until(what: string, done: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("the service lease", () => {
  it("has one holder; the refused one is told who holds it; a release frees it at once", async () => {
    await clear();
    const a = lease("run");
    const b = lease("sync");
    await a.lease.take();
    expect(a.lease.snapshot().phase).toBe("held");
    const refused = await b.lease.take().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toMatchObject({
      code: "LEASE_HELD",
      message: expect.stringContaining(
        `held by run (pid ${process.pid} on ${hostname()})`,
      ) as unknown,
      hint: expect.stringContaining("SIGTERM") as unknown,
    });
    const held = await collectStatus(w, config);
    expect(held.lease?.holder).toMatchObject({
      host: hostname(),
      pid: process.pid,
      command: "run",
    });
    expect(Date.parse(held.lease?.holder?.expires ?? "")).toBeGreaterThan(
      Date.parse(held.lease?.holder?.since ?? ""),
    );

    await a.lease.release();
    expect(a.lease.snapshot().phase).toBe("released");
    const free = await collectStatus(w, config);
    expect(free.lease).toMatchObject({
      holder: null,
      last: { command: "run", ended: "released" },
    });
    await b.lease.take();
    expect(b.lease.snapshot().phase).toBe("held");
    // Renewals keep the tenure: the holder's `since` stays while its expiry moves on.
    const first = (await readLease(w)).holder;
    await until(
      "a renewal",
      () =>
        (b.lease.snapshot().holder?.expiresAtMs ?? 0) >
        (first?.expiresAtMs ?? 0),
    );
    const renewed = (await readLease(w)).holder;
    expect(renewed?.acquiredAtMs).toBe(first?.acquiredAtMs);
    expect(renewed?.expiresAtMs).toBeGreaterThan(first?.expiresAtMs ?? 0);
  });

  it("of another host is waited out until its claim expires; a waiting process logs the holder", async () => {
    await clear();
    await writeLease(w, {
      ownerId: "other-host-owner",
      owner: { host: `not-${hostname()}`, pid: 4242, start: "boot:1" },
      command: "run",
      acquiredAtMs: "now",
      ttlMs: TTL_MS,
      released: false,
    });
    const b = lease();
    const stop = new AbortController();
    const got = b.lease.acquire(stop.signal);
    await until("the waiting line", () =>
      b.log.text().includes("waiting for the service lease"),
    );
    expect(b.lease.snapshot()).toMatchObject({
      phase: "waiting",
      holder: { owner: { pid: 4242 }, command: "run" },
    });
    expect(await got).toBe(true);
    const { holder, nowMs } = await readLease(w);
    expect(holder?.owner.pid).toBe(process.pid);
    // The other claim had lapsed when it was taken: it expired by the server's clock.
    const other = (await readLease(w)).owners.find(
      (o) => o.ownerId === "other-host-owner",
    );
    expect(other?.expiresAtMs).toBeLessThanOrEqual(holder?.acquiredAtMs ?? 0);
    expect(nowMs).toBeGreaterThanOrEqual(holder?.acquiredAtMs ?? Infinity);
  });

  it("of this host whose process is gone is taken over at once, its claim released", async () => {
    await clear();
    const exited = spawn(process.execPath, ["-e", ""]);
    const deadPid = exited.pid as number;
    await new Promise((resolve) => exited.once("exit", resolve));
    await writeLease(w, {
      ownerId: "dead-owner",
      owner: { host: hostname(), pid: deadPid, start: "boot:1" },
      command: "run",
      acquiredAtMs: "now",
      // Far longer than the test: only its owner's death frees it.
      ttlMs: 3_600_000,
      released: false,
    });
    const b = lease();
    await b.lease.take();
    expect(b.log.text()).toContain("service lease holder is gone");
    const dead = (await readLease(w)).owners.find(
      (o) => o.ownerId === "dead-owner",
    );
    expect(dead?.released).toBe(true);
  });

  it("claimed by two at the same moment has one holder; the other withdraws", async () => {
    await clear();
    const a = lease();
    const b = lease();
    const results = await Promise.allSettled([a.lease.take(), b.lease.take()]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const refused = results.find((r) => r.status === "rejected");
    expect(refused?.reason).toMatchObject({ code: "LEASE_HELD" });
    const phases = [a, b].map((x) => x.lease.snapshot().phase).sort();
    expect(phases).toEqual(["held", "idle"]);
    const live = (await readLease(w)).owners.filter(
      (o) => !o.released && o.expiresAtMs > Date.now(),
    );
    expect(live).toHaveLength(1);
  });

  it("held is lost when an earlier tenure is live: `lost` aborts with LEASE_LOST", async () => {
    await clear();
    const a = lease();
    await a.lease.take();
    const held = (await readLease(w)).holder;
    // A claim that began before this tenure and was not yet visible when this one was read
    // (two claims inside the time of one insert).
    await writeLease(w, {
      ownerId: "earlier-owner",
      owner: { host: `not-${hostname()}`, pid: 7, start: "" },
      command: "run",
      acquiredAtMs: (held?.acquiredAtMs ?? 0) - 1000,
      ttlMs: 60_000,
      released: false,
    });
    const lost = await a.lease.whenLost();
    expect(lost).toMatchObject({ code: "LEASE_LOST" });
    expect(a.lease.lost.aborted).toBe(true);
    expect(a.lease.snapshot().phase).toBe("lost");
    expect(a.log.text()).toContain("the service lease was lost");
  });

  // Only a server can have two processes on one database: on the embedded engine the holder's
  // renewal is written whenever it comes (no other process can open the data directory).
  it.runIf(process.env.CLICKHOUSE_URL !== undefined)(
    "held by a process paused between reading and renewing it is not taken back when the renewal lands",
    async () => {
      await clear();
      // A's writes pass through a gate: closed, its renewal waits after its read, as in a
      // process stopped (SIGSTOP, a frozen VM) between the two statements.
      let open: () => void = () => undefined;
      let gate: Promise<void> | undefined;
      const client = new Proxy(w.client, {
        get(target, key, receiver) {
          const value: unknown = Reflect.get(target, key, receiver);
          if (key !== "command" || typeof value !== "function") return value;
          return async (...args: unknown[]) => {
            if (gate) await gate;
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      });
      const aLog = memoryLogger();
      const a = new ServiceLease({
        warehouse: { ...w, client },
        logger: aLog.logger,
        command: "run",
        ttlMs: TTL_MS,
        renewMs: 200,
      });
      leases.push(a);
      await a.take();
      const aTenure = (await readLease(w)).holder;
      gate = new Promise((resolve) => {
        open = resolve;
      });
      // A's claim lapses while its renewal waits; B takes the lease.
      const b = lease();
      expect(await b.lease.acquire(new AbortController().signal)).toBe(true);
      const bTenure = (await readLease(w)).holder;
      expect(bTenure?.ownerId).not.toBe(aTenure?.ownerId);
      expect(bTenure?.acquiredAtMs).toBeGreaterThan(aTenure?.acquiredAtMs ?? 0);

      // A wakes: its renewal lands after its claim lapsed, writes nothing, and A has lost.
      gate = undefined;
      open();
      const lost = await a.whenLost();
      expect(lost.message).toBe(
        "the service lease was lost: its claim expired before it was renewed",
      );
      // B holds on through renewals after A's woke, and never lost it.
      const renewedAt = (await readLease(w)).holder?.renewedAtMs ?? 0;
      await until(
        "two renewals of B after A woke",
        () => (b.lease.snapshot().holder?.renewedAtMs ?? 0) > renewedAt + 200,
      );
      expect(b.lease.lost.aborted).toBe(false);
      expect(b.lease.snapshot().phase).toBe("held");
      const after = await readLease(w);
      expect(after.holder?.ownerId).toBe(bTenure?.ownerId);
      // A's tenure was not renewed after it lapsed: its latest row is its withdrawal.
      const aLatest = after.owners.find((o) => o.ownerId === aTenure?.ownerId);
      expect(aLatest?.released).toBe(true);
    },
  );
});
