// `sessionhouse hold add|list|release`: legal holds. A hold names a person, a resource or a
// session (and its children); the sessions it names are never deleted by the retention while it
// is active. Every change is logged (legal_hold_events) and shown by `status`.
import { UsageError } from "../../util/errors.js";
import { noSuchName } from "../../util/nearest.js";
import { parseInstant } from "../../util/time.js";
import {
  addHold,
  applyActiveHolds,
  existingTables,
  type HoldScope,
  isActive,
  type LegalHold,
  listHolds,
  releaseHold,
  seenInSessions,
  Tables,
  type Warehouse,
} from "../../warehouse/index.js";
import { withWarehouse } from "../command-warehouse.js";
import { decision, type DecisionFlags } from "../operator.js";
import { printListing } from "../output.js";
import { configFrom, type GlobalOptions } from "../runtime.js";
import { counted } from "../output.js";

type AddFlags = DecisionFlags & {
  user?: string;
  resource?: string;
  session?: string;
  until?: string;
  force?: boolean;
};

function target(o: AddFlags): { scope: HoldScope; value: string } {
  const given = (
    [
      ["user", o.user],
      ["resource", o.resource],
      ["session", o.session],
    ] as const
  ).filter(([, v]) => v !== undefined);
  const [first] = given;
  if (given.length !== 1 || !first || (first[1] ?? "").trim() === "")
    throw new UsageError(
      "give exactly one of --user, --resource or --session, not empty",
      {
        hint: "one hold names one person, resource or session; add several holds for more",
      },
    );
  return { scope: first[0], value: (first[1] ?? "").trim() };
}

const WHY_HOLD =
  "say why (the matter, the request), it is recorded with the hold";

export async function runHoldAdd(
  globals: GlobalOptions,
  o: AddFlags,
): Promise<void> {
  const nowMs = Date.now();
  const what = target(o);
  const { by, reason } = decision(o, WHY_HOLD);
  const untilMs =
    o.until === undefined ? undefined : parseInstant(o.until, "--until", nowMs);
  if (untilMs !== undefined && untilMs <= nowMs)
    throw new UsageError("--until is not in the future", {
      hint: "give a later end, or leave --until out to hold until released",
    });
  const config = configFrom(globals, {}, { needsApi: false });
  await withWarehouse(config, "write", async (w) => {
    const unseen = await checkSeen(w, what, o.force === true);
    const h = await addHold(
      w,
      { ...what, reason, createdBy: by, untilMs },
      nowMs,
    );
    const rows = await applyActiveHolds(w, by, nowMs);
    process.stdout.write(
      `${h.holdId}: ${h.scope} ${h.value} held${h.until ? ` until ${h.until}` : " until released"} by ${by}; ${counted(rows, "stored session row")} flagged\n`,
    );
    if (unseen)
      process.stdout.write(
        `no stored session names ${h.scope === "user" ? "the person" : "the resource"} ${h.value} yet: the hold keeps the sessions that name it from the next sync on\n`,
      );
  });
}

const SCOPE_NOUN = {
  user: ["person", "people"],
  resource: ["resource", "resources"],
} as const;

/**
 * A person or resource no stored session names is refused, offering those that are named,
 * nearest first, unless `force` (a hold placed ahead of the data); returns whether it was
 * unseen. A session id is taken as given.
 */
async function checkSeen(
  w: Warehouse,
  what: { scope: HoldScope; value: string },
  force: boolean,
): Promise<boolean> {
  if (what.scope === "session") return false;
  const { seen, others } = await seenInSessions(w, what.scope, what.value);
  if (seen) return false;
  if (force) return true;
  const [one, many] = SCOPE_NOUN[what.scope];
  throw noSuchName(
    [`${one} seen in the stored sessions`, `${many} seen`],
    what.value,
    others,
    `no hold was placed; to hold ${what.scope === "user" ? "a person" : "a resource"} no session names yet, add --force`,
  );
}

export async function runHoldList(
  globals: GlobalOptions,
  o: { all?: boolean; json?: boolean },
): Promise<void> {
  const nowMs = Date.now();
  const config = configFrom(globals, {}, { needsApi: false });
  await withWarehouse(config, "read", async (w) => {
    const all = (await existingTables(w)).has(Tables.legalHolds)
      ? await listHolds(w)
      : [];
    const shown = o.all ? all : all.filter((h) => isActive(h, nowMs));
    printListing(shown, o.json, {
      json: (h) => ({ ...h, active: isActive(h, nowMs) }),
      row: (h) => holdLine(h, nowMs),
      none: `no ${o.all ? "" : "active "}legal holds`,
      noun: "legal hold",
    });
  });
}

function holdLine(h: LegalHold, nowMs: number) {
  return {
    hold: h.holdId,
    holds: `${h.scope} ${h.value}`,
    state: isActive(h, nowMs)
      ? "active"
      : h.releasedAt
        ? "released"
        : "expired",
    by: h.createdBy,
    since: h.createdAt,
    until: h.until ?? "",
    reason: h.reason,
    released: h.releasedAt
      ? `${h.releasedAt} by ${h.releasedBy}: ${h.releaseReason}`
      : "",
  };
}

export async function runHoldRelease(
  globals: GlobalOptions,
  id: string,
  o: DecisionFlags,
): Promise<void> {
  const nowMs = Date.now();
  const { by, reason } = decision(o, WHY_HOLD);
  const config = configFrom(globals, {}, { needsApi: false });
  await withWarehouse(config, "write", async (w) => {
    const holds = await listHolds(w);
    const h = holds.find((x) => x.holdId === id.trim());
    if (!h || h.releasedAt !== null)
      throw new UsageError(
        h
          ? `hold ${h.holdId} was released already (${h.releasedAt})`
          : `there is no hold ${id}`,
        {
          hint: "`sessionhouse hold list --all` shows every hold and its state",
        },
      );
    await releaseHold(w, h, { by, reason }, nowMs);
    const rows = await applyActiveHolds(w, by, nowMs);
    process.stdout.write(
      `${h.holdId} released by ${by}; ${counted(rows, "stored session row")} no longer held (normal retention resumes for them)\n`,
    );
  });
}
