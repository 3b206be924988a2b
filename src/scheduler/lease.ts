// Keeps the service lease (src/warehouse/lease.ts) for one process: `run` waits for it and
// renews it while it runs the jobs; `sync` and `demo` take it for their duration or refuse.
// A holder that cannot renew before its claim would expire, or finds another holder, has lost
// it: `lost` is aborted and the process stops its work. docs/scale-out.md, "Two processes on
// one database", says why and what the race window is.
import { randomUUID } from "node:crypto";
import {
  readLease,
  writeLease,
  type LeaseClaim,
  type LeaseState,
  type Warehouse,
} from "../warehouse/index.js";
import { errorMessage, FatalError } from "../util/errors.js";
import type { Logger } from "../util/logger.js";
import {
  ownerGone as processGone,
  thisProcess,
  type ProcessOwner,
} from "../util/process.js";

export interface LeaseOptions {
  warehouse: Warehouse;
  logger: Logger;
  /** The command that takes it (run, sync, demo): stored with the claim, shown by status. */
  command: string;
  /** A claim lapses this long after it was written unless renewed (service.leaseTtlMs). */
  ttlMs: number;
  /** How often the holder renews and a waiting process tries again (service.leaseRenewMs). */
  renewMs: number;
  /**
   * Level of the lines that say the lease was taken and released (default info; a one-shot
   * command logs them at debug, where they would only add noise to its output).
   */
  tenureLogLevel?: "info" | "debug";
  /** Whether an owner is gone (default: src/util/process.ts, this host only). */
  ownerGone?: (owner: ProcessOwner) => boolean | undefined;
}

/** Where this process stands: not asked yet, waiting for it, holding it, lost it, released it. */
export type LeasePhase = "idle" | "waiting" | "held" | "lost" | "released";

/** What this process knows of the lease: its phase and the holder as last read. */
export interface LeaseSnapshot {
  phase: LeasePhase;
  /** The holder as last read (this process while it holds it); undefined when nobody held it. */
  holder: LeaseClaim | undefined;
  /** When this process got the lease (epoch ms, this process's clock); undefined before. */
  heldSinceMs: number | undefined;
}

/** The lease is held by another process: the message names it. */
function leaseHeldError(holder: LeaseClaim, command: string): FatalError {
  return new FatalError(
    "LEASE_HELD",
    `${command} refused: the service lease of this database is held by ${describeHolder(holder)}`,
    {
      hint: "stop that process (SIGTERM releases the lease at once) or let it do the work on its schedule; a holder killed without cleanup loses the lease when it expires (service.leaseTtlMs)",
    },
  );
}

/** `sessionhouse run (pid 42 on host-a) since … until …`. */
function describeHolder(c: LeaseClaim): string {
  return `${c.command} (pid ${c.owner.pid} on ${c.owner.host}) since ${new Date(c.acquiredAtMs).toISOString()}, expiring ${new Date(c.expiresAtMs).toISOString()} unless renewed`;
}

export class ServiceLease {
  readonly #o: LeaseOptions;
  readonly #ownerId = randomUUID();
  readonly #self = thisProcess();
  readonly #lost = new AbortController();
  #phase: LeasePhase = "idle";
  #holder: LeaseClaim | undefined;
  #heldSinceMs: number | undefined;
  /** The tenure's start as the server timed it, kept by every renewal. */
  #acquiredAtMs = 0;
  /** performance.now() past which an unrenewed claim may have lapsed on the server. */
  #validUntil = 0;
  #timer: NodeJS.Timeout | undefined;
  #renewing: Promise<void> | undefined;

  /**
   * On the embedded engine no other process can open the data directory: a renewal that comes
   * late (a long statement holding the engine) cannot have let another one in.
   */
  get #exclusive(): boolean {
    return this.#o.warehouse.kind === "embedded";
  }

  constructor(options: LeaseOptions) {
    this.#o = options;
  }

  /** Aborted when this process held the lease and lost it; its reason says why. */
  get lost(): AbortSignal {
    return this.#lost.signal;
  }

  /** Resolves with the LEASE_LOST error once this process lost the lease it held. */
  whenLost(): Promise<FatalError> {
    const signal = this.#lost.signal;
    return new Promise((resolve) => {
      const settle = () => resolve(signal.reason as FatalError);
      if (signal.aborted) settle();
      else signal.addEventListener("abort", settle, { once: true });
    });
  }

  snapshot(): LeaseSnapshot {
    return {
      phase: this.#phase,
      holder: this.#holder,
      heldSinceMs: this.#heldSinceMs,
    };
  }

  /** One attempt: takes the lease when nobody holds it; otherwise the error names the holder. */
  async take(): Promise<void> {
    const holder = await this.#attempt();
    if (holder) throw leaseHeldError(holder, this.#o.command);
    this.#keep();
  }

  /**
   * Waits until this process holds the lease, trying every renewMs, or until `stop` is
   * aborted (false). Logs who holds it, once per holder.
   */
  async acquire(stop: AbortSignal): Promise<boolean> {
    let logged: string | undefined;
    this.#phase = "waiting";
    while (!stop.aborted) {
      try {
        const holder = await this.#attempt();
        if (!holder) {
          this.#keep();
          return true;
        }
        if (holder.ownerId !== logged) {
          logged = holder.ownerId;
          this.#o.logger.info(
            leaseFields(holder),
            "waiting for the service lease: another process holds it",
          );
        }
      } catch (err) {
        this.#o.logger.warn(
          { err: errorMessage(err) },
          "could not read the service lease; trying again",
        );
      }
      await sleep(this.#o.renewMs, stop);
    }
    return false;
  }

  /** Ends the tenure at once (a waiting process takes over); does nothing unless held. */
  async release(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#renewing;
    if (this.#phase !== "held") return;
    this.#phase = "released";
    try {
      await this.#write(this.#acquiredAtMs, true);
      this.#o.logger[this.#o.tenureLogLevel ?? "info"](
        "service lease released",
      );
    } catch (err) {
      this.#o.logger.warn(
        { err: errorMessage(err), ttlMs: this.#o.ttlMs },
        "could not release the service lease: it lapses when it expires",
      );
    }
  }

  /**
   * Claims or renews; undefined when this process holds the lease after it, else the holder.
   * A holder that finds it lost aborts `lost`.
   */
  async #attempt(): Promise<LeaseClaim | undefined> {
    const started = performance.now();
    const before = await readLease(this.#o.warehouse);
    const holding = this.#phase === "held";
    const other = await this.#otherHolder(before);
    if (other) {
      this.#holder = other;
      if (holding) this.#lose(`${describeHolder(other)} holds it now`);
      return other;
    }
    if (
      holding &&
      before.holder?.ownerId !== this.#ownerId &&
      !this.#exclusive
    ) {
      this.#lose("its claim expired before it was renewed");
      return before.holder;
    }
    // A renewal is written only while this claim is live: one that lands after the claim lapsed
    // (this process paused between the read above and the write) must not bring the earlier
    // tenure back over the process that took the lease meanwhile.
    await this.#write(
      holding ? this.#acquiredAtMs : "now",
      false,
      holding && !this.#exclusive,
    );
    const after = await readLease(this.#o.warehouse);
    const winner = after.holder;
    if (winner?.ownerId === this.#ownerId) {
      this.#holder = winner;
      this.#acquiredAtMs = winner.acquiredAtMs;
      this.#validUntil = started + this.#o.ttlMs;
      if (!holding) {
        this.#phase = "held";
        this.#heldSinceMs = Date.now();
        this.#o.logger[this.#o.tenureLogLevel ?? "info"](
          leaseFields(winner),
          "service lease taken",
        );
      }
      return undefined;
    }
    // Another claim of the same moment came first, or this claim lapsed before its renewal
    // landed: withdraw this one.
    await this.#write(this.#acquiredAtMs, true).catch(() => undefined);
    this.#holder = winner;
    if (holding) {
      const mine = after.owners.find((o) => o.ownerId === this.#ownerId);
      this.#lose(
        mine !== undefined && !mine.released && mine.expiresAtMs > after.nowMs
          ? "another claim came first"
          : "its claim expired before it was renewed",
      );
    }
    // Undefined only after a lapsed renewal with nobody holding: #renew, the one caller that
    // holds, reads the phase, not this.
    return winner;
  }

  /**
   * The holder when it is another process that is not provably gone. One of this host whose
   * process is gone (ownerGone) has its claim released here, so the lease is free at once.
   */
  async #otherHolder(state: LeaseState): Promise<LeaseClaim | undefined> {
    const h = state.holder;
    if (!h || h.ownerId === this.#ownerId) return undefined;
    const gone = (this.#o.ownerGone ?? processGone)(h.owner);
    if (gone !== true) return h;
    this.#o.logger.warn(
      leaseFields(h),
      "service lease holder is gone: its claim is released before it expires",
    );
    await writeLease(this.#o.warehouse, {
      ownerId: h.ownerId,
      owner: h.owner,
      command: h.command,
      acquiredAtMs: h.acquiredAtMs,
      ttlMs: 0,
      released: true,
    });
    return undefined;
  }

  async #write(
    acquiredAtMs: number | "now",
    released: boolean,
    onlyWhileLive = false,
  ): Promise<void> {
    await writeLease(this.#o.warehouse, {
      onlyWhileLive,
      ownerId: this.#ownerId,
      owner: this.#self,
      command: this.#o.command,
      acquiredAtMs,
      ttlMs: this.#o.ttlMs,
      released,
    });
  }

  /** Renews every renewMs until released or lost. */
  #keep(): void {
    this.#timer = setInterval(() => {
      this.#renewing ??= this.#renew().finally(() => {
        this.#renewing = undefined;
      });
    }, this.#o.renewMs);
    this.#timer.unref();
  }

  async #renew(): Promise<void> {
    if (this.#phase !== "held") return;
    try {
      await this.#attempt();
    } catch (err) {
      this.#o.logger.warn(
        { err: errorMessage(err) },
        "could not renew the service lease; trying again",
      );
    }
    if (
      this.#phase === "held" &&
      !this.#exclusive &&
      performance.now() > this.#validUntil
    )
      this.#lose("it could not be renewed before it expired");
  }

  #lose(why: string): void {
    if (this.#phase !== "held") return;
    this.#phase = "lost";
    clearInterval(this.#timer);
    this.#timer = undefined;
    const message = `the service lease was lost: ${why}`;
    this.#o.logger.error(
      { command: this.#o.command },
      `${message}; stopping the work`,
    );
    this.#lost.abort(
      new FatalError("LEASE_LOST", message, {
        hint: "another process runs the jobs now; restart this one to wait for the lease as a standby",
      }),
    );
  }
}

/** A claim as log fields. */
function leaseFields(c: LeaseClaim): Record<string, unknown> {
  return {
    holder: { host: c.owner.host, pid: c.owner.pid, command: c.command },
    since: new Date(c.acquiredAtMs).toISOString(),
    expires: new Date(c.expiresAtMs).toISOString(),
  };
}

/** Resolves after `ms`, or at once when `stop` is aborted. */
function sleep(ms: number, stop: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      stop.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    stop.addEventListener("abort", done, { once: true });
  });
}
