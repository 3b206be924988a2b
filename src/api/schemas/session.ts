// The Session object (spec "Resources and their fields / Session") as it arrives on the wire.
import { z } from "zod";
import {
  durationStringMs,
  listMetadataSchema,
  loose,
  str,
  strArray,
  timestamp,
} from "./common.js";

export const sessionIdentitySchema = loose({
  id: str,
  name: str,
  email: str,
  type: str,
  groups: strArray,
  externalIds: strArray,
});
export type SessionIdentity = z.infer<typeof sessionIdentitySchema>;

const brandMemberSchema = loose({
  user: sessionIdentitySchema.optional(),
  endUser: sessionIdentitySchema.optional(),
});

const KNOWN_USER_MEMBERS = new Set(["type", "username", "native"]);

/**
 * The member the spec calls `service` carries the vendor's brand name on the wire
 * (API-FACTS): find it by shape, an object holding `user` and/or `endUser`.
 */
export function findBrandMember(
  user: Record<string, unknown>,
): Record<string, unknown> | undefined {
  if (isIdentityHolder(user.service)) return user.service;
  for (const [key, value] of Object.entries(user)) {
    if (!KNOWN_USER_MEMBERS.has(key) && isIdentityHolder(value)) return value;
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

const sessionUserSchema = z
  .looseObject({
    type: str,
    username: str,
    native: loose({ username: str }).optional(),
  })
  .transform((user) => {
    const brand = findBrandMember(user);
    const parsed =
      brand === undefined ? undefined : brandMemberSchema.parse(brand);
    return { ...user, identity: parsed?.user, endUser: parsed?.endUser };
  });

export const sessionSchema = loose({
  id: z.string({ error: "session has no id" }).min(1, "session id is empty"),
  startTime: timestamp,
  endTime: timestamp.optional(),
  duration: str.refine(
    (d) => d === "" || durationStringMs(d) !== undefined,
    "duration is not a protobuf Duration",
  ),
  sessionStatus: str,
  network: loose({ clientIpAddress: str, serverIpAddress: str }).default({
    clientIpAddress: "",
    serverIpAddress: "",
  }),
  sidecar: loose({ id: str, name: str, technology: str }).default({
    id: "",
    name: "",
    technology: "",
  }),
  user: sessionUserSchema.default({
    type: "",
    username: "",
    identity: undefined,
    endUser: undefined,
  }),
  resource: loose({ type: str, id: str, name: str, technology: str }).default({
    type: "",
    id: "",
    name: "",
    technology: "",
  }),
  connector: loose({ id: str, name: str }).default({ id: "", name: "" }),
  parentSessionId: str,
});
export type Session = z.infer<typeof sessionSchema>;

export const listSessionsResponseSchema = z.object({
  sessions: z.array(z.unknown()).default([]),
  listMetadata: listMetadataSchema.default({
    after: "",
    before: "",
    nextCursor: "",
    count: 0,
  }),
});

export const getSessionResponseSchema = z.looseObject({ session: z.unknown() });

export interface ListSessionsRequest {
  limit: number;
  startTimestamp?: string;
  endTimestamp?: string;
  cursor?: string;
  query?: string;
  sortBy?: string;
}
