// What each entity stream reads and how it is kept: one entry per stream, read by one engine
// (entity-streams.ts). An entry names the read operation (its list member and largest limit
// are the operation's: LIST_MEMBERS, LIST_LIMITS), the parents it is read per (a user's devices, a resource's
// native users) and the content column that names a record's parent, the normalizer that
// gives each record its id and columns, the secret allowlist applied to a record before
// anything else is done with it, and the history rule.
import type { DirectoryList } from "../api/control-plane.js";
import {
  redactIdentityLink,
  redactNativeUser,
} from "../sources/credentials.js";
import {
  inventoryColumns,
  normalizeCloud,
  normalizeDevice,
  normalizeIdentityLink,
  normalizeNativeUser,
  normalizeSuspension,
  normalizeUser,
  type Normalized,
} from "../sources/directory.js";
import {
  type HistoryStream,
  humanUserIds,
  sessionResourceIds,
  sessionUserIds,
  type Warehouse,
} from "../warehouse/index.js";
import { ENTITY_STREAMS, type EntityStream } from "./names.js";

/** How a stream reads its objects. */
export type StreamRead =
  /** One listing of everything. */
  | { kind: "listing"; operation: DirectoryList }
  /** One listing per parent, the parent's id sent as `filter`. */
  | {
      kind: "perParent";
      operation: DirectoryList;
      filter: string;
      /** The parents to list, from what is stored. */
      parents: (w: Warehouse) => Promise<string[]>;
      /** The content column that holds a record's parent. */
      parentColumn: string;
    }
  /** One GetUser per id; `not_found` is that object's disappearance. */
  | { kind: "get"; ids: (w: Warehouse) => Promise<string[]> };

/**
 * How a stream keeps what it read:
 *   current: `<table>` (one row per object, FINAL) and `<table>_history` (one row per version,
 *            a disappearance row when a complete read no longer returns the object);
 *   versions: every version read (one row per id and content hash) and, when a complete read
 *            no longer returns an object, its removal (policy suspensions).
 */
export type HistoryRule =
  { kind: "current"; tables: HistoryStream } | { kind: "versions" };

export interface StreamSpec {
  readonly stream: EntityStream;
  readonly read: StreamRead;
  /** The record's secrets removed (an allowlist); the identity for streams without any. */
  readonly redact: (record: unknown) => unknown;
  /** A record (secrets removed) as rows of its table, or the reasons it cannot be stored;
   *  `parent` is the parent it was listed for, "" for a listing of everything. */
  readonly normalize: (record: unknown, parent: string) => Normalized[];
  readonly history: HistoryRule;
}

const same = (record: unknown): unknown => record;

/** A normalizer of a record to its one row. */
const one =
  (normalize: (record: unknown, parent: string) => Normalized) =>
  (record: unknown, parent: string): Normalized[] => [
    normalize(record, parent),
  ];

/**
 * Each entity stream's spec but its name, the key it stands under; a stream whose records hold
 * no secret has no `redact`.
 */
const SPECS: {
  readonly [S in EntityStream]: Omit<StreamSpec, "stream" | "redact"> &
    Partial<Pick<StreamSpec, "redact">>;
} = {
  policy_suspensions: {
    read: { kind: "listing", operation: "listPolicySuspensions" },
    normalize: one(normalizeSuspension),
    history: { kind: "versions" },
  },
  users: {
    read: { kind: "get", ids: sessionUserIds },
    normalize: one(normalizeUser),
    history: { kind: "current", tables: "users" },
  },
  user_devices: {
    read: {
      kind: "perParent",
      operation: "listUserDevices",
      filter: "userId",
      parents: humanUserIds,
      parentColumn: "user_id",
    },
    normalize: one(normalizeDevice),
    history: { kind: "current", tables: "user_devices" },
  },
  native_users: {
    read: {
      kind: "perParent",
      operation: "listNativeUsers",
      filter: "resourceId",
      parents: sessionResourceIds,
      parentColumn: "resource_id",
    },
    redact: redactNativeUser,
    normalize: one(normalizeNativeUser),
    history: { kind: "current", tables: "native_users" },
  },
  identity_links: {
    read: { kind: "listing", operation: "listIdentityLinks" },
    redact: redactIdentityLink,
    normalize: one(normalizeIdentityLink),
    history: { kind: "current", tables: "identity_links" },
  },
  inventory: {
    read: { kind: "listing", operation: "listInventoryObjects" },
    normalize: inventoryColumns,
    history: { kind: "current", tables: "inventory" },
  },
  clouds: {
    read: { kind: "listing", operation: "listIntegrationClouds" },
    normalize: one(normalizeCloud),
    history: { kind: "current", tables: "clouds" },
  },
};

/** The spec of every entity stream, named. */
export const STREAM_SPECS = Object.fromEntries(
  ENTITY_STREAMS.map((stream) => [
    stream,
    { redact: same, ...SPECS[stream], stream },
  ]),
  // Every EntityStream is a key: ENTITY_STREAMS lists them all, and SPECS has each.
) as Readonly<Record<EntityStream, StreamSpec>>;
