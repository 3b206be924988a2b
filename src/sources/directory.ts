// The control plane's directory objects (users, devices, native users, identity links,
// inventory columns, policy suspensions, clouds) turned into the rows of their tables
// (migrations/0009_entity_streams.sql): fields checked and typed, secrets removed first
// (credentials.ts), and a content hash over the normalized record that leaves out what moves
// on every read (updatedAt, lastSeenAt) so that history records real changes only.
import type { Rejected } from "../pipeline/answer.js";
import { createHash } from "node:crypto";
import {
  credentialKinds,
  redactIdentityLink,
  redactNativeUser,
} from "./credentials.js";

/** A record of a directory stream, normalized; or the reason it cannot be stored. */
export interface EntityRecord {
  id: string;
  /** The content columns of its table, in table order (no bookkeeping columns). */
  columns: Record<string, unknown>;
  /** Digest of the columns that say what the object is (not when it was touched). */
  contentHash: string;
  /** The record as received, secrets removed. */
  raw: string;
  /** Marked for deletion by the service: stored as a disappearance. */
  deleted: boolean;
  /** When the service says it last changed (updatedAt, else createdAt), epoch ms. */
  changedAtMs: number | undefined;
}

/** A record normalized for its table, or rejected (pipeline/answer.ts). */
export type Normalized = EntityRecord | Rejected;

export function isBad(r: Normalized): r is Rejected {
  return "reason" in r;
}

/** Columns that change without the object changing: kept, but not hashed. */
const UNHASHED = new Set([
  "updated_at",
  "last_seen_at",
  "marked_for_deletion_at",
]);

const EPOCH = "1970-01-01 00:00:00.000";
const RFC3339 =
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Reads typed fields of one object, collecting what is wrong instead of throwing. */
class Fields {
  readonly problems: string[];
  constructor(
    readonly o: Record<string, unknown>,
    readonly where: string,
    problems: string[] = [],
  ) {
    this.problems = problems;
  }

  #bad(key: string, what: string, v: unknown): void {
    this.problems.push(
      `${this.where}${key}: expected ${what}, got ${Array.isArray(v) ? "a list" : v === null ? "null" : typeof v}`,
    );
  }

  str(key: string): string {
    const v = this.o[key];
    if (v === undefined || v === null) return "";
    if (typeof v === "string") return v;
    this.#bad(key, "a string", v);
    return "";
  }

  bool(key: string): boolean {
    const v = this.o[key];
    if (v === undefined || v === null) return false;
    if (typeof v === "boolean") return v;
    this.#bad(key, "a boolean", v);
    return false;
  }

  int(key: string): number {
    const v = this.o[key];
    if (v === undefined || v === null) return 0;
    if (typeof v === "number" && Number.isSafeInteger(v)) return v;
    if (typeof v === "string" && /^-?\d{1,15}$/.test(v)) return Number(v);
    this.#bad(key, "an integer", v);
    return 0;
  }

  /** Epoch ms of an RFC 3339 member; undefined when absent. */
  timeMs(key: string): number | undefined {
    const v = this.o[key];
    if (v === undefined || v === null || v === "") return undefined;
    if (typeof v === "string" && RFC3339.test(v)) {
      const ms = Date.parse(v);
      if (Number.isFinite(ms)) return ms;
    }
    this.#bad(key, "an RFC 3339 time", v);
    return undefined;
  }

  time(key: string): string | null {
    const ms = this.timeMs(key);
    return ms === undefined ? null : chTime(ms);
  }

  strs(key: string): string[] {
    const v = this.o[key];
    if (v === undefined || v === null) return [];
    if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v;
    this.#bad(key, "a list of strings", v);
    return [];
  }

  obj(key: string): Fields | undefined {
    const v = this.o[key];
    if (v === undefined || v === null) return undefined;
    if (isObject(v))
      return new Fields(v, `${this.where}${key}.`, this.problems);
    this.#bad(key, "an object", v);
    return undefined;
  }

  list(key: string): Record<string, unknown>[] {
    const v = this.o[key];
    if (v === undefined || v === null) return [];
    if (Array.isArray(v) && v.every(isObject)) return v;
    this.#bad(key, "a list of objects", v);
    return [];
  }
}

function chTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 23).replace("T", " ");
}

function hashOf(columns: Record<string, unknown>): string {
  const hashed = Object.entries(columns).filter(([k]) => !UNHASHED.has(k));
  return createHash("sha256")
    .update(JSON.stringify(hashed))
    .digest("hex")
    .slice(0, 32);
}

function rawOf(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** The record, or the reason it cannot be stored (a missing id, a field of the wrong type). */
function finish(
  f: Fields,
  id: string,
  columns: Record<string, unknown>,
  raw: unknown,
  deleted = false,
): Normalized {
  const rawText = rawOf(raw);
  if (id === "")
    return { recordId: "", reason: `${f.where}id: missing`, raw: rawText };
  if (f.problems.length > 0)
    return { recordId: id, reason: f.problems.join("; "), raw: rawText };
  const changedAtMs = f.timeMs("updatedAt") ?? f.timeMs("createdAt");
  return {
    id,
    columns,
    contentHash: hashOf(columns),
    raw: rawText,
    deleted,
    changedAtMs,
  };
}

function notAnObject(value: unknown, what: string): Rejected {
  return {
    recordId: "",
    reason: `${what}: expected an object`,
    // A bare string could be anything, a secret included: only its length is kept.
    raw:
      typeof value === "string"
        ? `(a string of ${value.length} characters)`
        : rawOf(value),
  };
}

// ---------------------------------------------------------------------------------------------

export function normalizeUser(value: unknown): Normalized {
  if (!isObject(value)) return notAnObject(value, "user");
  const f = new Fields(value, "");
  const human = f.obj("human");
  const machine = f.obj("machine");
  return finish(
    f,
    f.str("id"),
    {
      email: human?.str("email") ?? "",
      full_name: f.str("fullName"),
      first_name: human?.str("firstName") ?? "",
      last_name: human?.str("lastName") ?? "",
      machine_name: machine?.str("name") ?? "",
      type: f.str("type"),
      db_username: f.str("dbUsername"),
      group_ids: [...f.strs("groupIds")].sort(),
      termination_protection: f.bool("terminationProtection"),
      expire_at: f.time("expireAt"),
      created_at: f.time("createdAt") ?? EPOCH,
      updated_at: f.time("updatedAt") ?? EPOCH,
    },
    value,
  );
}

export function normalizeDevice(value: unknown, userId: string): Normalized {
  if (!isObject(value)) return notAnObject(value, "device");
  const f = new Fields(value, "");
  const hw = f.obj("hardwareInfo");
  const sw = f.obj("softwareInfo");
  const deviceId = f.str("deviceId");
  return finish(
    f,
    deviceId === "" ? "" : `${userId}/${deviceId}`,
    {
      user_id: userId,
      device_id: deviceId,
      app_version: f.str("version"),
      ip_address: f.str("ipAddress"),
      transparent_proxy_enabled: f.bool("transparentProxyEnabled"),
      model_name: hw?.str("modelName") ?? "",
      model_identifier: hw?.str("modelIdentifier") ?? "",
      model_number: hw?.str("modelNumber") ?? "",
      serial_number: hw?.str("serialNumber") ?? "",
      hardware_uuid: hw?.str("hardwareUuid") ?? "",
      provisioning_udid: hw?.str("provisioningUdid") ?? "",
      activation_lock_status: hw?.str("activationLockStatus") ?? "",
      system_version: sw?.str("systemVersion") ?? "",
      kernel_version: sw?.str("kernelVersion") ?? "",
      computer_name: sw?.str("computerName") ?? "",
      os_user_name: sw?.str("userName") ?? "",
      last_seen_at: f.time("lastSeenAt"),
    },
    value,
  );
}

function nativeUserColumns(nu: Record<string, unknown>, f: Fields) {
  const variant = (name: string) => f.obj(name);
  const basic = variant("basic");
  const apiKey = variant("httpApiKey");
  const httpBasic = variant("httpBasic");
  const bearer = variant("httpBearer");
  const iam = variant("iam");
  const kube = variant("kubernetes");
  const snowflake = variant("snowflakeKey");
  const ssh = variant("sshKey");
  const first = (...values: Array<string | undefined>) =>
    values.find((v) => v !== undefined && v !== "") ?? "";
  return {
    resource_id: f.str("resourceId"),
    username: f.str("username"),
    use_as_default: f.bool("useAsDefault"),
    termination_protection: f.bool("terminationProtection"),
    credential_kinds: credentialKinds(nu),
    credential_username: first(
      basic?.str("username"),
      httpBasic?.str("username"),
      iam?.str("username"),
      snowflake?.str("username"),
      ssh?.str("username"),
    ),
    credential_header: first(httpBasic?.str("header"), bearer?.str("header")),
    credential_location: first(apiKey?.str("location")),
    credential_key_name: first(apiKey?.str("key")),
    credential_iam_type: first(iam?.str("type")),
    credential_iam_role: first(iam?.str("role")),
    credential_env: first(kube?.str("kubeconfigEnv")),
    created_at: f.time("createdAt") ?? EPOCH,
    updated_at: f.time("updatedAt") ?? EPOCH,
  };
}

/** A native user, its secrets removed before anything else is done with it. */
export function normalizeNativeUser(value: unknown): Normalized {
  if (!isObject(value)) return notAnObject(value, "native user");
  const nu = redactNativeUser(value);
  const f = new Fields(nu, "");
  return finish(f, f.str("id"), nativeUserColumns(nu, f), nu);
}

/** An identity link; the native user it carries loses its secrets first. */
export function normalizeIdentityLink(value: unknown): Normalized {
  if (!isObject(value)) return notAnObject(value, "identity link");
  const link = redactIdentityLink(value) as Record<string, unknown>;
  const f = new Fields(link, "");
  const nu = f.obj("nativeUser");
  const user = f.obj("user");
  const group = f.obj("group");
  const host = f.obj("resourceHostname");
  const identityType = user
    ? "user"
    : group
      ? "group"
      : host
        ? "resource_hostname"
        : "";
  const identity = user ?? group ?? host;
  return finish(
    f,
    f.str("id"),
    {
      native_user_id: nu?.str("id") ?? "",
      resource_id: nu?.str("resourceId") ?? "",
      native_username: nu?.str("username") ?? "",
      identity_type: identityType,
      identity_id: identity?.str("id") ?? "",
      user_email: user?.obj("human")?.str("email") ?? "",
      user_full_name: user?.str("fullName") ?? "",
      group_name: group?.str("name") ?? "",
      resource_hostname: host?.str("hostname") ?? "",
      termination_protection: f.bool("terminationProtection"),
      created_at: f.time("createdAt") ?? EPOCH,
      updated_at: f.time("updatedAt") ?? EPOCH,
    },
    link,
  );
}

export function normalizeSuspension(value: unknown): Normalized {
  if (!isObject(value)) return notAnObject(value, "policy suspension");
  const f = new Fields(value, "");
  return finish(
    f,
    f.str("id"),
    {
      policy_id: f.str("policyId"),
      org_id: f.str("orgId"),
      identity_type: f.str("identityType"),
      identity_id: f.str("identityId"),
      created_by: f.str("createdBy"),
      request_id: f.str("requestId"),
      suspension_type: f.str("suspensionType"),
      input_condition: f.str("inputCondition"),
      expire_at: f.time("expireAt"),
      created_at: f.time("createdAt") ?? EPOCH,
      updated_at: f.time("updatedAt") ?? EPOCH,
    },
    value,
  );
}

const AUTODISCOVERY = /^(aws|gcp)(Enable|Allow)/;

export function normalizeCloud(value: unknown): Normalized {
  if (!isObject(value)) return notAnObject(value, "cloud integration");
  const f = new Fields(value, "");
  const aws = f.obj("aws");
  const gcp = f.obj("gcp");
  const provider = aws ? "aws" : gcp ? "gcp" : "";
  const switches = Object.entries((aws ?? gcp)?.o ?? {})
    .filter(([k, v]) => AUTODISCOVERY.test(k) && v === true)
    .map(([k]) => k)
    .sort();
  return finish(
    f,
    f.str("id"),
    {
      name: f.str("name"),
      provider,
      active: f.bool("active"),
      account_id: aws?.str("awsAccountId") ?? gcp?.str("accountId") ?? "",
      region: aws?.str("awsCloudRegion") ?? "",
      project_id: gcp?.str("projectId") ?? "",
      project_number: gcp?.int("projectNumber") ?? 0,
      role:
        aws?.str("awsCustomerRoleArn") ||
        aws?.str("awsServiceIamRoleArn") ||
        gcp?.str("roleName") ||
        "",
      autodiscovery: switches,
      created_at: f.time("createdAt") ?? EPOCH,
      updated_at: f.time("updatedAt") ?? EPOCH,
    },
    value,
  );
}

// ---------------------------------------------------------------------------------------------
// Inventory: an InventoryObject carries one of six kinds; every column and sub-column in it,
// however deeply nested, becomes one row.

const INVENTORY_KINDS = [
  "datastore",
  "db",
  "schema",
  "table",
  "column",
  "subColumn",
] as const;

function inventoryColumn(
  c: Record<string, unknown>,
  kind: "column" | "subColumn",
  datastoreId: string,
  where: string,
): Normalized {
  const f = new Fields(c, where);
  const label = f.str("dataLabel");
  const labelV2 = f.str("dataLabelV2");
  const marked = f.time("markedForDeletionAt");
  return finish(
    f,
    f.str("id"),
    {
      kind,
      resource_id: f.str("resourceId"),
      resource_name: f.str("resourceName"),
      datastore_id: datastoreId,
      path: f.str("path"),
      name: f.str("name"),
      data_type: f.str("dataType"),
      data_type_oid: f.int("dataTypeOid"),
      data_label: label,
      data_label_v2: labelV2,
      data_labels: [
        ...new Set([label, labelV2].filter((l) => l !== "")),
      ].sort(),
      data_label_locked: f.bool("dataLabelLockedForSidecar"),
      tags: f.strs("tags"),
      created_at: f.time("createdAt") ?? EPOCH,
      updated_at: f.time("updatedAt") ?? EPOCH,
      marked_for_deletion_at: marked,
    },
    c,
    marked !== null,
  );
}

/**
 * Every column and sub-column an InventoryObject holds, whichever kind it carries. A part that
 * could not be read (a container, a column without an id) hides what it held: its dead letter
 * keeps the stored columns of its datastore, else of its resource, from being taken as gone.
 */
export function inventoryColumns(value: unknown): Normalized[] {
  if (!isObject(value)) return [notAnObject(value, "inventory object")];
  const out = inventoryParts(value);
  const scope = containerScope(value);
  return scope === undefined
    ? out
    : out.map((r) =>
        isBad(r) && r.recordId === "" && r.scope === undefined
          ? { ...r, scope }
          : r,
      );
}

/** The datastore, else the resource, of an inventory object of one kind. */
function containerScope(
  value: Record<string, unknown>,
): { column: string; value: string } | undefined {
  const kinds = INVENTORY_KINDS.filter(
    (k) => value[k] !== undefined && value[k] !== null,
  );
  const kind = kinds[0];
  if (kind === undefined || kinds.length !== 1) return undefined;
  const o = value[kind];
  if (!isObject(o)) return undefined;
  if (kind === "datastore")
    return typeof o.id === "string" && o.id !== ""
      ? { column: "datastore_id", value: o.id }
      : undefined;
  return typeof o.resourceId === "string" && o.resourceId !== ""
    ? { column: "resource_id", value: o.resourceId }
    : undefined;
}

function inventoryParts(value: Record<string, unknown>): Normalized[] {
  const out: Normalized[] = [];
  const bad = (reason: string) =>
    out.push({ recordId: "", reason, raw: rawOf(value) });
  const listOf = (o: Record<string, unknown>, key: string, where: string) => {
    const v = o[key];
    if (v === undefined || v === null) return [];
    if (Array.isArray(v) && v.every(isObject)) return v;
    bad(`${where}${key}: expected a list of objects`);
    return [];
  };
  const table = (t: Record<string, unknown>, ds: string, where: string) => {
    listOf(t, "columns", where).forEach((c, i) =>
      out.push(inventoryColumn(c, "column", ds, `${where}columns[${i}].`)),
    );
  };
  const schema = (s: Record<string, unknown>, ds: string, where: string) => {
    listOf(s, "tables", where).forEach((t, i) =>
      table(t, ds, `${where}tables[${i}].`),
    );
  };
  const db = (d: Record<string, unknown>, ds: string, where: string) => {
    listOf(d, "schemas", where).forEach((s, i) =>
      schema(s, ds, `${where}schemas[${i}].`),
    );
    listOf(d, "tables", where).forEach((t, i) =>
      table(t, ds, `${where}tables[${i}].`),
    );
  };
  const kinds = INVENTORY_KINDS.filter(
    (k) => value[k] !== undefined && value[k] !== null,
  );
  if (kinds.length === 0) {
    // An object of a kind this exporter does not know yet: kept, with the reason.
    bad(
      `inventory object of none of the known kinds (${Object.keys(value).slice(0, 5).join(", ") || "empty"})`,
    );
    return out;
  }
  for (const kind of kinds) {
    const o = value[kind];
    if (!isObject(o)) {
      bad(`${kind}: expected an object`);
      continue;
    }
    switch (kind) {
      case "datastore": {
        const ds = typeof o.id === "string" ? o.id : "";
        listOf(o, "dbs", "datastore.").forEach((d, i) =>
          db(d, ds, `datastore.dbs[${i}].`),
        );
        break;
      }
      case "db":
        db(o, "", "db.");
        break;
      case "schema":
        schema(o, "", "schema.");
        break;
      case "table":
        table(o, "", "table.");
        break;
      case "column":
        out.push(inventoryColumn(o, "column", "", "column."));
        break;
      case "subColumn":
        out.push(inventoryColumn(o, "subColumn", "", "subColumn."));
        break;
    }
  }
  return out;
}
