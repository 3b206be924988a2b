// The Session object as it arrives on the wire (docs/control-plane-wire.md, "Sessions" and
// "JSON mapping").
import { z } from "zod";
import {
  durationStringMs,
  isTimestamp,
  loose,
  str,
  strArray,
  timestamp,
} from "./common.js";

// The objects of a session record, each member declared once: the schema below, its fast check
// (this file) and the byte scan (session-scan.ts) read their members from these. A member
// declared `str` (or `strArray`) is a string (or strings) that proto3 omits when empty.
const sessionIdentitySchema = loose({
  id: str,
  name: str,
  email: str,
  type: str,
  groups: strArray,
  externalIds: strArray,
});
type SessionIdentity = z.infer<typeof sessionIdentitySchema>;

const brandMemberSchema = loose({
  user: sessionIdentitySchema.optional(),
  endUser: sessionIdentitySchema.optional(),
});

const networkSchema = loose({ clientIpAddress: str, serverIpAddress: str });
const sidecarSchema = loose({ id: str, name: str, technology: str });
const resourceSchema = loose({
  type: str,
  id: str,
  name: str,
  technology: str,
});
const connectorSchema = loose({ id: str, name: str });
const nativeSchema = loose({ username: str });
/** The members of `user` other than identity holders (its brand member, see findBrandKey). */
const userSchema = z.looseObject({
  type: str,
  username: str,
  native: nativeSchema.optional(),
});

const KNOWN_USER_MEMBERS = new Set(Object.keys(userSchema.shape));

/**
 * The member the operation list calls `service` carries the vendor's brand name on the wire
 * (docs/control-plane-wire.md, "Sessions"): find it by shape, an object holding `user` and/or
 * `endUser`. Returns its name; the insert reads the identities under that name.
 */
function findBrandKey(user: Record<string, unknown>): string | undefined {
  if (isIdentityHolder(user.service)) return "service";
  // for…in, not Object.entries: this runs for every session and allocates nothing.
  for (const key in user) {
    if (!Object.hasOwn(user, key) || KNOWN_USER_MEMBERS.has(key)) continue;
    if (isIdentityHolder(user[key])) return key;
  }
  return undefined;
}

function isIdentityHolder(v: unknown): v is Record<string, unknown> {
  return (
    typeof v === "object" &&
    v !== null &&
    !Array.isArray(v) &&
    ("user" in v || "endUser" in v)
  );
}

const sessionUserSchema = userSchema.transform((user, ctx) => {
  const brandMember = findBrandKey(user);
  if (brandMember === undefined)
    return {
      ...user,
      identity: undefined,
      endUser: undefined,
      brandMember: undefined,
    };
  const brand = user[brandMember];
  // A malformed identity is a validation issue of the record (dead letter), never a throw.
  const parsed = brandMemberSchema.safeParse(brand);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      ctx.addIssue({
        code: "custom",
        message: issue.message,
        path: ["<brand member>", ...issue.path.map(String)],
      });
    }
    return z.NEVER;
  }
  return {
    ...user,
    identity: parsed.data.user,
    endUser: parsed.data.endUser,
    brandMember,
  };
});

/** In the order the service writes the members (the byte scan tries them in this order). */
export const sessionSchema = loose({
  id: z.string({ error: "session has no id" }).min(1, "session id is empty"),
  startTime: timestamp,
  endTime: timestamp.optional(),
  duration: str.refine(
    (d) => d === "" || durationStringMs(d) !== undefined,
    "duration is not a protobuf Duration",
  ),
  sessionStatus: str,
  // An object proto3 omits is an object of empty members.
  network: networkSchema.prefault({}),
  sidecar: sidecarSchema.prefault({}),
  user: sessionUserSchema.prefault({}),
  resource: resourceSchema.prefault({}),
  connector: connectorSchema.prefault({}),
  parentSessionId: str,
});
export type Session = z.infer<typeof sessionSchema>;

/** The objects of a session record by name, for the byte scan (session-scan.ts). */
export const sessionObjects = {
  session: sessionSchema,
  network: networkSchema,
  sidecar: sidecarSchema,
  resource: resourceSchema,
  connector: connectorSchema,
  user: userSchema,
  native: nativeSchema,
  holder: brandMemberSchema,
  identity: sessionIdentitySchema,
};

export interface ListSessionsRequest {
  limit: number;
  startTimestamp?: string;
  endTimestamp?: string;
  cursor?: string;
  query?: string;
  sortBy?: string;
}

// ---------------------------------------------------------------------------------------------
// The hot path. A 100000-session page is validated record by record; zod costs ~20 µs a record,
// most of the end-to-end budget. `parseSession` first tries a direct
// check that accepts only records of the plain, expected shape — strings where the schema wants
// strings, nothing missing that it requires — and builds the same value zod would; anything
// else goes through `sessionSchema`, which then decides (and explains a rejection). So the fast
// path never accepts what the schema rejects; test/unit/api/session-fast.test.ts holds them equal.

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const optStr = (v: unknown): v is string | undefined =>
  v === undefined || typeof v === "string";
const DURATION = /^-?\d+(?:\.\d{1,9})?s$/;

/** The keys of a shape whose member is declared `I` (`str` or `strArray`). */
type Declared<T extends z.ZodRawShape, I> = {
  [K in keyof T]: T[K] extends I ? K : never;
}[keyof T] &
  string;

/** The members of an object schema declared `is`, in their order. */
function declared<
  T extends z.ZodRawShape,
  I extends typeof str | typeof strArray,
>(schema: { readonly shape: T }, is: I): Declared<T, I>[] {
  return Object.keys(schema.shape).filter(
    (k): k is Declared<T, I> => schema.shape[k] === is,
  );
}

/** The members of the session itself declared `str` (sessionStatus, parentSessionId, …). */
const TOP_STRINGS = declared(sessionSchema, str);

/**
 * The members of the session that are objects of `str` members, which proto3 omits when empty
 * (network, sidecar, resource, connector, …), each with its members: read from the schema.
 */
const STRING_OBJECTS: readonly (readonly [string, readonly string[]])[] =
  Object.entries(sessionSchema.shape).flatMap(([key, member]) => {
    if (!(member instanceof z.ZodPrefault)) return [];
    const inner: unknown = member.def.innerType;
    if (!(inner instanceof z.ZodObject)) return [];
    const strings = declared<z.ZodRawShape, typeof str>(inner, str);
    return strings.length === Object.keys(inner.shape).length
      ? [[key, strings] as const]
      : [];
  });
const USER = declared(userSchema, str);
const NATIVE = declared(nativeSchema, str);
const IDENTITY_STRINGS = declared(sessionIdentitySchema, str);
const IDENTITY_ARRAYS = declared(sessionIdentitySchema, strArray);

/** An object of empty strings: what the schema makes of an object proto3 omitted. */
const blank = <K extends string>(keys: readonly K[]): Record<K, string> =>
  Object.fromEntries(keys.map((k) => [k, ""])) as Record<K, string>;

function fastStrings<K extends string>(
  v: unknown,
  keys: readonly K[],
): (Record<K, string> & Obj) | undefined | false {
  if (v === undefined) return undefined;
  if (!isObj(v)) return false;
  // Filled in place: the value was just parsed from the record's text and is ours alone, and
  // the defaults are what the schema would fill in too (so a fallback to it decides the same).
  for (const k of keys) {
    const x = v[k];
    if (x === undefined) v[k] = "";
    else if (typeof x !== "string") return false;
  }
  return v as Record<K, string> & Obj;
}

function fastIdentity(v: unknown): SessionIdentity | undefined | false {
  const o = fastStrings(v, IDENTITY_STRINGS);
  if (o === undefined || o === false) return o;
  for (const k of IDENTITY_ARRAYS) {
    const a = o[k];
    if (a === undefined) (o as Obj)[k] = [];
    else if (!Array.isArray(a) || !a.every((x) => typeof x === "string"))
      return false;
  }
  return o as unknown as SessionIdentity;
}

/** The `user` member of a session, defaults filled in; undefined when it is not of the fast shape. */
function fastUser(value: unknown): Session["user"] | undefined {
  if (value === undefined) {
    return {
      ...blank(USER),
      identity: undefined,
      endUser: undefined,
      brandMember: undefined,
    };
  }
  const u = fastStrings(value, USER);
  if (!u) return undefined;
  let native: { username: string } | undefined;
  if (u.native !== undefined) {
    const n = fastStrings(u.native, NATIVE);
    if (!n) return undefined;
    native = n;
  }
  const brandMember = findBrandKey(u);
  let identity: SessionIdentity | undefined;
  let endUser: SessionIdentity | undefined;
  if (brandMember !== undefined) {
    const brand = u[brandMember] as Obj;
    const i = fastIdentity(brand.user);
    const e = fastIdentity(brand.endUser);
    if (i === false || e === false) return undefined;
    identity = i;
    endUser = e;
  }
  u.native = native;
  u.identity = identity;
  u.endUser = endUser;
  u.brandMember = brandMember;
  return u as unknown as Session["user"];
}

function fastSession(v: unknown): Session | undefined {
  if (!isObj(v)) return undefined;
  const { id, startTime, endTime, duration } = v;
  if (typeof id !== "string" || id === "") return undefined;
  if (typeof startTime !== "string" || !isTimestamp(startTime))
    return undefined;
  if (
    endTime !== undefined &&
    (typeof endTime !== "string" || !isTimestamp(endTime))
  )
    return undefined;
  if (
    !optStr(duration) ||
    (duration !== undefined &&
      duration !== "" &&
      !DURATION.test(duration.trim()))
  )
    return undefined;
  // Filled in place as fastStrings does: an omitted object is what the schema makes of it.
  for (const [key, members] of STRING_OBJECTS) {
    const o = fastStrings(v[key], members);
    if (o === false) return undefined;
    if (o === undefined) v[key] = blank(members);
  }
  const user = fastUser(v.user);
  if (user === undefined || fastStrings(v, TOP_STRINGS) === false)
    return undefined;
  v.duration = duration ?? "";
  v.user = user;
  return v as unknown as Session;
}

export type SessionParse =
  { success: true; data: Session } | { success: false; error: z.ZodError };

/** Validates one session record: the fast path when it can, the zod schema otherwise. */
export function parseSession(value: unknown): SessionParse {
  const fast = fastSession(value);
  if (fast !== undefined) return { success: true, data: fast };
  return sessionSchema.safeParse(value);
}
