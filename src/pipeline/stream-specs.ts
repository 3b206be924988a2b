// The catalogue of every stream: sessions, the aggregation jobs' streams and the seven entity
// streams, one entry each, read by one engine entry (streams.ts: syncStream). An entry names
// the read operation (one of the API's, PROCEDURES; its answer's member is the operation's in
// LIST_MEMBERS, and a listing's largest limit its LIST_LIMITS), what a record's id is, how the
// stream reads (its read kind: the parents it is read per and the content column that names a
// record's parent, for a listing per parent), the secret allowlist applied to a record before
// anything else is done with it, the history rule and the checkpoint rule.
//
// The read kinds and their readers:
//   sessionWindows      ListSessionsV2 window by window (session-sync.ts);
//   aggregationWindows  ListLogAggregations window by window, per configured job (aggregations.ts);
//   listing, perParent, get   the entity streams' engine (entity-streams.ts), with a normalizer
//                       that gives each record its id and columns.
import type { DirectoryList } from "../api/control-plane.js";
import {
  DROPPED_SECRET_FIELDS,
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
  type DirectoryHistory,
  humanUserIds,
  sessionResourceIds,
  sessionUserIds,
  type Warehouse,
} from "../warehouse/index.js";
import type { EntityStream, StreamName } from "./names.js";

/** A normalizer of a record (secrets removed) to rows of its table, or the reasons it cannot be
 *  stored; `parent` is the parent it was listed for, "" for a listing of everything. */
type Normalize = (record: unknown, parent: string) => Normalized[];

/** How an entity stream reads its objects. */
export type DirectoryRead =
  /** One listing of everything. */
  | { kind: "listing"; operation: DirectoryList; normalize: Normalize }
  /** One listing per parent, the parent's id sent as `filter`. */
  | {
      kind: "perParent";
      operation: DirectoryList;
      normalize: Normalize;
      filter: string;
      /** The parents to list, from what is stored. */
      parents: (w: Warehouse) => Promise<string[]>;
      /** The content column that holds a record's parent. */
      parentColumn: string;
    }
  /** One GetUser per id; `not_found` is that object's disappearance. */
  | {
      kind: "get";
      operation: "getUser";
      normalize: Normalize;
      ids: (w: Warehouse) => Promise<string[]>;
    };

/** How a windowed stream reads: window by window over time, by its own pipeline. */
export type WindowRead =
  | { kind: "sessionWindows"; operation: "listSessionsV2" }
  | { kind: "aggregationWindows"; operation: "listLogAggregations" };

type StreamRead = DirectoryRead | WindowRead;

/**
 * How a stream keeps what it read:
 *   sessionKeys: one row per session id under FINAL, whatever changes between two reads (its
 *            start time included): session_keys (migrations/0023_session_tombstones.sql) holds
 *            every key an id was stored under, and a key the session no longer has gets a
 *            tombstone;
 *   windowVersions: every fetch of a window is a version, and each re-fetch supersedes the
 *            earlier ones (aggregation-store.ts); one that shrank supersedes nothing;
 *   current: `<table>` (one row per object, FINAL) and `<table>_history` (one row per version,
 *            a disappearance row when a complete read no longer returns the object);
 *   versions: every version read (one row per id and content hash) and, when a complete read
 *            no longer returns an object, its removal (policy suspensions).
 */
type HistoryRule = WindowHistory | DirectoryHistory;
type WindowHistory = { kind: "sessionKeys" } | { kind: "windowVersions" };

/**
 * How far a stream's checkpoint may move:
 *   windows: over time windows, each recorded in the window ledger (stream_windows,
 *            window-ledger.ts), only over the leading ones stored or skipped;
 *   readTime: to the time of the read, once everything it read is stored and every parent
 *            answered (or was skipped: the parent ledger, parent-ledger.ts).
 */
type CheckpointRule = { kind: "windows" } | { kind: "readTime" };

/**
 * What of a record may be stored:
 *   none: the record holds no secret (why says so), it is stored as received;
 *   allowlist: `redact` keeps only the members known to hold none (credentials.ts), before the
 *            record is normalized, kept as `raw`, logged or dead-lettered; `dropped` names the
 *            fields it drops.
 */
type SecretRule =
  | { kind: "none"; why: string }
  | {
      kind: "allowlist";
      redact: (record: unknown) => unknown;
      dropped: readonly string[];
    };

interface SpecOf<
  S extends StreamName,
  R extends StreamRead,
  H extends HistoryRule,
> {
  readonly stream: S;
  readonly read: R;
  /** What a record's id is, for the docs and for a reader of dead_letters.record_id. */
  readonly id: string;
  readonly secrets: SecretRule;
  readonly history: H;
  readonly checkpoint: CheckpointRule;
}

/** An entity stream's entry: read by the entity streams' engine. */
export type DirectorySpec = SpecOf<
  EntityStream,
  DirectoryRead,
  DirectoryHistory
>;

/** A normalizer of a record to its one row. */
const one =
  (normalize: (record: unknown, parent: string) => Normalized) =>
  (record: unknown, parent: string): Normalized[] => [
    normalize(record, parent),
  ];

const NO_CREDENTIAL: SecretRule = {
  kind: "none",
  why: "the object holds no credential (control-plane spec)",
};

/** An aggregation answer: counts, and the keys they count. */
const COUNTS_ONLY: SecretRule = {
  kind: "none",
  why: "an answer holds counts per key of the job's group-by fields; a field the service encrypts arrives as an opaque token",
};

const WINDOWS: CheckpointRule = { kind: "windows" };
const READ_TIME: CheckpointRule = { kind: "readTime" };

/**
 * Every stream's entry, under its name. A key's type keeps each entry's read kind, so the
 * engine entry knows the options and result of a stream from its name (streams.ts).
 */
export const STREAM_SPECS = {
  sessions: {
    stream: "sessions",
    read: { kind: "sessionWindows", operation: "listSessionsV2" },
    id: "the session's `id`",
    secrets: {
      kind: "none",
      why: "a session names its user, resource and connector, never a credential (control-plane spec, Session)",
    },
    history: { kind: "sessionKeys" },
    checkpoint: WINDOWS,
  },
  aggregations: {
    stream: "aggregations",
    read: { kind: "aggregationWindows", operation: "listLogAggregations" },
    id: "the job and the window's start (`JOB@2026-11-02T10:00:00.000Z`): one answer per window",
    secrets: COUNTS_ONLY,
    history: { kind: "windowVersions" },
    checkpoint: WINDOWS,
  },
  policy_suspensions: {
    stream: "policy_suspensions",
    read: {
      kind: "listing",
      operation: "listPolicySuspensions",
      normalize: one(normalizeSuspension),
    },
    id: "`id`",
    secrets: NO_CREDENTIAL,
    history: { kind: "versions" },
    checkpoint: READ_TIME,
  },
  users: {
    stream: "users",
    read: {
      kind: "get",
      operation: "getUser",
      normalize: one(normalizeUser),
      ids: sessionUserIds,
    },
    id: "`id`",
    secrets: NO_CREDENTIAL,
    history: { kind: "current", tables: "users" },
    checkpoint: READ_TIME,
  },
  user_devices: {
    stream: "user_devices",
    read: {
      kind: "perParent",
      operation: "listUserDevices",
      normalize: one(normalizeDevice),
      filter: "userId",
      parents: humanUserIds,
      parentColumn: "user_id",
    },
    id: "the user's id and the device's `deviceId`",
    secrets: NO_CREDENTIAL,
    history: { kind: "current", tables: "user_devices" },
    checkpoint: READ_TIME,
  },
  native_users: {
    stream: "native_users",
    read: {
      kind: "perParent",
      operation: "listNativeUsers",
      normalize: one(normalizeNativeUser),
      filter: "resourceId",
      parents: sessionResourceIds,
      parentColumn: "resource_id",
    },
    id: "`id`",
    secrets: {
      kind: "allowlist",
      redact: redactNativeUser,
      dropped: DROPPED_SECRET_FIELDS,
    },
    history: { kind: "current", tables: "native_users" },
    checkpoint: READ_TIME,
  },
  identity_links: {
    stream: "identity_links",
    read: {
      kind: "listing",
      operation: "listIdentityLinks",
      normalize: one(normalizeIdentityLink),
    },
    id: "`id`",
    secrets: {
      kind: "allowlist",
      redact: redactIdentityLink,
      dropped: DROPPED_SECRET_FIELDS.map((f) => `nativeUser.${f}`),
    },
    history: { kind: "current", tables: "identity_links" },
    checkpoint: READ_TIME,
  },
  inventory: {
    stream: "inventory",
    read: {
      kind: "listing",
      operation: "listInventoryObjects",
      normalize: inventoryColumns,
    },
    id: "each column's and sub-column's id within its object",
    secrets: NO_CREDENTIAL,
    history: { kind: "current", tables: "inventory" },
    checkpoint: READ_TIME,
  },
  clouds: {
    stream: "clouds",
    read: {
      kind: "listing",
      operation: "listIntegrationClouds",
      normalize: one(normalizeCloud),
    },
    id: "`id`",
    secrets: NO_CREDENTIAL,
    history: { kind: "current", tables: "clouds" },
    checkpoint: READ_TIME,
  },
} as const satisfies {
  readonly [S in StreamName]: S extends EntityStream
    ? SpecOf<S, DirectoryRead, DirectoryHistory>
    : SpecOf<S, WindowRead, WindowHistory>;
};

/** The read kind of stream `S`'s entry. */
export type ReadKindOf<S extends StreamName> =
  (typeof STREAM_SPECS)[S]["read"]["kind"];

/** The entry of an entity stream, typed for the entity streams' engine. */
export function directorySpec(stream: EntityStream): DirectorySpec {
  return STREAM_SPECS[stream];
}
