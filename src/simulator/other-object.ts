// The `otherObject` wire fault: a Get request (GetSession, GetUser) answered with another object
// the service holds, whole and well formed, under its own id — what a cache keyed wrongly in
// front of the service, or a service reading the wrong row, would answer. Which ids meet it is
// drawn from (fault seed, id asked for) (FaultInjector.answersOtherObject), and the object
// answered instead is a pure function of (fault seed, id asked for, the clock), so a retry meets
// the same lie. The request is rewritten to name the other object before the operation's
// handler answers it, so everything else (not_found, mutations, other faults) applies as usual.
import { DIRECTORY_PATHS } from "./directory-routes.js";
import type { Directory } from "./directory.js";
import { GET_SESSION_PATH } from "./list-sessions.js";
import { hash32 } from "./random.js";
import type { SessionGenerator } from "./sessions.js";
import { DAY_MS, HOUR_MS } from "./time.js";

/** One Get answered with another object. */
export interface OtherObject {
  /** "GetSession" or "GetUser". */
  operation: string;
  /** The id the request named. */
  askedId: string;
  /** The id of the object answered instead. */
  answeredId: string;
}

/** The Get operations the fault applies to: their path, name and the request member of the id. */
const GETS = [
  { path: GET_SESSION_PATH, operation: "GetSession", member: "sessionId" },
  { path: DIRECTORY_PATHS.getUser, operation: "GetUser", member: "id" },
] as const;

/** How many hours before the day-earlier hour are searched for a session to answer with. */
const SEARCH_HOURS = 48;

/**
 * Another session than `id` that has started by `nowMs`: one of the hour a day before the asked
 * one started (or of an hour before that, when that hour has none), so it is never one of the
 * sessions listed with it. Undefined when `id` names no session that has started.
 */
function otherSession(
  generator: SessionGenerator,
  seed: number,
  id: string,
  nowMs: number,
): string | undefined {
  const asked = generator.getSession(id);
  if (asked === undefined || asked.startMs > nowMs) return undefined;
  const hour = Math.floor((asked.startMs - DAY_MS) / HOUR_MS) * HOUR_MS;
  for (let k = 0; k < SEARCH_HOURS; k++) {
    const from = hour - k * HOUR_MS;
    const list = generator
      .sessionsStartingIn(from, from + HOUR_MS)
      .filter((s) => s.id !== id);
    const pick =
      list[hash32(seed, "otherObject", id) % Math.max(1, list.length)];
    if (pick !== undefined) return pick.id;
  }
  return undefined;
}

/** Another user than `id`, one the directory holds at `nowMs`. */
function otherUser(
  generator: SessionGenerator,
  directory: Directory,
  seed: number,
  id: string,
  nowMs: number,
): string | undefined {
  const ids = [...generator.index.userById.keys()];
  const start = hash32(seed, "otherObject", id) % Math.max(1, ids.length);
  for (let k = 0; k < ids.length; k++) {
    const other = ids[(start + k) % ids.length] as string;
    if (other !== id && directory.user(other, nowMs) !== undefined)
      return other;
  }
  return undefined;
}

/**
 * The request of a Get at `path` rewritten to name another object, and what was rewritten; or
 * undefined when the request is not a Get, `meets(id)` says its id does not meet the fault, or
 * there is no other object to answer with.
 */
export function otherObjectRequest(
  path: string,
  body: Readonly<Record<string, unknown>>,
  o: {
    generator: SessionGenerator;
    directory: Directory;
    seed: number;
    nowMs: number;
    meets: (id: string) => boolean;
  },
): { body: Record<string, unknown>; served: OtherObject } | undefined {
  const get = GETS.find((g) => g.path === path);
  if (get === undefined) return undefined;
  const id = body[get.member];
  if (typeof id !== "string" || id === "" || !o.meets(id)) return undefined;
  const answeredId =
    get.member === "sessionId"
      ? otherSession(o.generator, o.seed, id, o.nowMs)
      : otherUser(o.generator, o.directory, o.seed, id, o.nowMs);
  if (answeredId === undefined) return undefined;
  return {
    body: { ...body, [get.member]: answeredId },
    served: { operation: get.operation, askedId: id, answeredId },
  };
}
