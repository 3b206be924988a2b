// The organisation's directory as the control plane's read operations describe it at a moment of
// simulated time: users, their desktop devices, native users per resource (with credentials,
// secrets included), identity links, the data inventory, policy suspensions and cloud
// integrations. Built from the same org as the sessions (same ids), and a pure function of
// (seed, object, time): objects change at period boundaries (a user joins a group, a column is
// relabelled, a link is replaced, a device or native user goes away and comes back), so a
// reader that comes back later finds something to record as history.

import type { SimOrg, SimResource, SimUser, Technology } from "./model.js";
import type { OrgIndex } from "./org.js";
import { hash32, hashId } from "./random.js";
import { HOUR_MS, DAY_MS, formatTimestamp } from "./time.js";
import {
  DATA_LABELS,
  desktopDeviceOf,
  policyCatalog,
  TABLES,
  userSubTypeOf,
} from "./logs/catalog.js";

/** Objects change only at the boundaries of these periods (UTC). */
const CHANGE_PERIOD_MS = 6 * HOUR_MS;
/** Created-at times of the directory lie after this instant. */
const ORIGIN_MS = Date.UTC(2024, 0, 1);
/** How many periods back `updatedAt` looks for the last change. */
const UPDATE_LOOKBACK_PERIODS = 40;
/** Every simulated secret starts with this, so that a test can look for any of them. */
export const SECRET_PREFIX = "SIMSECRET-";

function periodOf(ms: number): number {
  return Math.floor(ms / CHANGE_PERIOD_MS);
}

function pct(...parts: (string | number)[]): number {
  return hash32(...parts) % 100;
}

const ts = (ms: number): string => formatTimestamp(ms);

/** Proto3 JSON: zero values omitted. */
function compact(members: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(members)) {
    if (value === undefined || value === "" || value === false || value === 0)
      continue;
    if (Array.isArray(value) && value.length === 0) continue;
    out[key] = value;
  }
  return out;
}

/** The start of the latest period ≤ p whose state differs from the one before, within reach. */
function lastChangeMs<T>(
  p: number,
  stateAt: (period: number) => T,
  fallbackMs: number,
): number {
  const now = JSON.stringify(stateAt(p));
  for (let q = p; q > p - UPDATE_LOOKBACK_PERIODS; q--) {
    if (JSON.stringify(stateAt(q - 1)) !== now)
      return Math.max(q * CHANGE_PERIOD_MS, fallbackMs);
  }
  return fallbackMs;
}

export interface NativeUserRef {
  id: string;
  resource: SimResource;
  username: string;
  index: number;
}

export class Directory {
  readonly seed: number;
  readonly org: SimOrg;
  readonly index: OrgIndex;
  readonly orgId: string;
  readonly nativeUsers: readonly NativeUserRef[];
  readonly #nativeUsersOf = new Map<string, NativeUserRef[]>();
  readonly #nativeById = new Map<string, NativeUserRef>();

  constructor(org: SimOrg, index: OrgIndex) {
    this.seed = org.seed;
    this.org = org;
    this.index = index;
    this.orgId = `org_${hashId(16, org.seed, "org-id")}`;
    const natives: NativeUserRef[] = [];
    for (const r of org.resources) {
      const list = r.nativeUsers.map((username, i) => ({
        id: `nu_${hashId(20, org.seed, "native-user", r.id, username)}`,
        resource: r,
        username,
        index: i,
      }));
      this.#nativeUsersOf.set(r.id, list);
      natives.push(...list);
    }
    natives.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    this.nativeUsers = natives;
    for (const n of natives) this.#nativeById.set(n.id, n);
  }

  #createdMs(...parts: (string | number)[]): number {
    return (
      ORIGIN_MS + (hash32(this.seed, "created", ...parts) % (300 * DAY_MS))
    );
  }

  // ---------------------------------------------------------------------------------------
  // Users

  /** Present at `nowMs`: a human is away (GetUser: not_found) in about 2 % of periods. */
  userPresent(user: SimUser, nowMs: number): boolean {
    return (
      user.type !== "human" ||
      pct(this.seed, "user-gone", user.id, periodOf(nowMs)) >= 2
    );
  }

  /** A group a human joins for a period (about one period in five), and leaves after. */
  #extraGroup(user: SimUser, p: number): string | undefined {
    if (user.type !== "human") return undefined;
    if (pct(this.seed, "user-join", user.id, p) >= 20) return undefined;
    const others = this.org.groups.filter((g) => !user.groupIds.includes(g.id));
    const g =
      others[
        hash32(this.seed, "user-join-group", user.id, p) %
          Math.max(1, others.length)
      ];
    return g?.id;
  }

  /** The User message of GetUser, or undefined when it is not found now. */
  user(id: string, nowMs: number): Record<string, unknown> | undefined {
    const u = this.index.userById.get(id);
    if (!u || !this.userPresent(u, nowMs)) return undefined;
    const p = periodOf(nowMs);
    const extra = this.#extraGroup(u, p);
    const createdMs = this.#createdMs("user", u.id);
    const updatedMs = lastChangeMs(
      p,
      (q) => this.#extraGroup(u, q) ?? "",
      createdMs,
    );
    const contractor =
      u.type === "human" && userSubTypeOf(this.seed, u) === "contractor";
    const [first = "", ...rest] = u.name.split(" ");
    return compact({
      id: u.id,
      dbUsername: u.username.replace(/[^a-z0-9_]/g, "_"),
      type: u.type,
      terminationProtection: u.type === "machine",
      expireAt: contractor
        ? ts(
            createdMs + (400 + (hash32(this.seed, "exp", u.id) % 400)) * DAY_MS,
          )
        : undefined,
      createdAt: ts(createdMs),
      updatedAt: ts(updatedMs),
      groupIds: extra ? [...u.groupIds, extra] : [...u.groupIds],
      fullName: u.name,
      human:
        u.type === "human"
          ? compact({
              firstName: first,
              lastName: rest.join(" "),
              email: u.email,
            })
          : undefined,
      machine: u.type === "machine" ? { name: u.name } : undefined,
    });
  }

  // ---------------------------------------------------------------------------------------
  // Desktop devices

  /** The devices of a user now: the desktop device of the logs, away in ~3 % of periods. */
  devices(userId: string, nowMs: number): Record<string, unknown>[] {
    const u = this.index.userById.get(userId);
    if (!u) return [];
    const d = desktopDeviceOf(this.seed, u);
    const p = periodOf(nowMs);
    if (!d || pct(this.seed, "device-gone", u.id, p) < 3) return [];
    const off = hash32(this.seed, "device-version", u.id) % 16;
    const minor = 20 + Math.floor((p + off) / 16);
    const h = hash32(this.seed, "device-hw", u.id);
    return [
      compact({
        deviceId: d.deviceId,
        version: `1.${minor}.${h % 10}`,
        ipAddress: `10.8.${(h >>> 8) % 256}.${((h >>> 16) % 254) + 1}`,
        transparentProxyEnabled: pct(this.seed, "device-tp", u.id, p) < 50,
        hardwareInfo: compact({
          modelName: d.modelName,
          modelIdentifier: d.modelIdentifier,
          modelNumber: d.modelNumber,
          serialNumber: d.serialNumber,
          hardwareUuid: hashId(32, this.seed, "hw-uuid", u.id).toUpperCase(),
          provisioningUdid: hashId(24, this.seed, "udid", u.id),
          activationLockStatus: h % 3 === 0 ? "enabled" : "disabled",
        }),
        softwareInfo: compact({
          systemVersion: d.systemVersion,
          kernelVersion: d.kernelVersion,
          computerName: d.computerName,
          userName: d.userName,
        }),
        lastSeenAt: ts(
          nowMs -
            (hash32(this.seed, "device-seen", u.id, p) % CHANGE_PERIOD_MS),
        ),
      }),
    ];
  }

  // ---------------------------------------------------------------------------------------
  // Native users

  nativeUsersOf(resourceId: string): readonly NativeUserRef[] {
    return this.#nativeUsersOf.get(resourceId) ?? [];
  }

  nativeUserById(id: string): NativeUserRef | undefined {
    return this.#nativeById.get(id);
  }

  /** A native user is away in ~3 % of periods. */
  nativeUserPresent(n: NativeUserRef, nowMs: number): boolean {
    return pct(this.seed, "native-gone", n.id, periodOf(nowMs)) >= 3;
  }

  #useAsDefault(n: NativeUserRef, p: number): boolean {
    const flipped = pct(this.seed, "native-default", n.id, p) < 8;
    return (n.index === 0) !== flipped;
  }

  /** A secret value: rotated once a day, always starting with SECRET_PREFIX. */
  #secret(n: NativeUserRef, what: string, nowMs: number): string {
    const day = Math.floor(nowMs / DAY_MS);
    return `${SECRET_PREFIX}${what}-${hashId(24, this.seed, "secret", n.id, what, day)}`;
  }

  /** The NativeUser message now, credentials with their secret values. */
  nativeUser(n: NativeUserRef, nowMs: number): Record<string, unknown> {
    const p = periodOf(nowMs);
    const createdMs = this.#createdMs("native", n.id);
    const secret = (what: string) => this.#secret(n, what, nowMs);
    const credential = this.#credential(n, secret);
    return compact({
      id: n.id,
      resourceId: n.resource.id,
      username: n.username,
      secret:
        pct(this.seed, "native-secret", n.id) < 30
          ? secret("secret")
          : undefined,
      useAsDefault: this.#useAsDefault(n, p),
      terminationProtection: n.index === 0,
      createdAt: ts(createdMs),
      // A rotated secret is a change as well.
      updatedAt: ts(
        Math.max(
          lastChangeMs(p, (q) => this.#useAsDefault(n, q), createdMs),
          Math.floor(nowMs / DAY_MS) * DAY_MS,
        ),
      ),
      ...credential,
    });
  }

  #credential(
    n: NativeUserRef,
    secret: (what: string) => string,
  ): Record<string, unknown> {
    const tech: Technology = n.resource.technology;
    const pick = hash32(this.seed, "credential", n.id) % 3;
    switch (tech) {
      case "http":
      case "grpc":
      case "web":
      case "mcp":
      case "llm":
        if (pick === 0)
          return {
            httpApiKey: {
              location: "HTTP_API_KEY_LOCATION_HEADER",
              key: "X-Api-Key",
              value: secret("api-key"),
            },
          };
        if (pick === 1)
          return {
            httpBearer: { header: "Authorization", token: secret("token") },
          };
        return {
          httpBasic: {
            header: "Authorization",
            username: n.username,
            password: secret("http-password"),
          },
        };
      case "snowflake":
        return {
          snowflakeKey: { username: n.username, key: secret("private-key") },
        };
      case "ssh":
      case "rdp":
        return { sshKey: { username: n.username, key: secret("ssh-key") } };
      case "athena":
      case "dynamodb":
      case "s3":
        return {
          iam: {
            type: "IAM_NATIVE_USER_TYPE_AWS",
            role: `arn:aws:iam::${100000000000 + (hash32(this.seed, "aws-account") % 899999999999)}:role/${n.username}`,
            username: n.username,
          },
        };
      case "kubernetes":
        return { kubernetes: { kubeconfigEnv: `KUBECONFIG_${n.index}` } };
      default:
        return {
          basic: compact({
            username: n.username,
            password: secret("password"),
            passwordIsEnv: false,
          }),
        };
    }
  }

  // ---------------------------------------------------------------------------------------
  // Identity links: each native user's link is replaced every LINK_PERIODS periods (a new id,
  // often another identity); about a fifth of the time it has none.

  #linkGeneration(n: NativeUserRef, p: number): number {
    const off = hash32(this.seed, "link-offset", n.id) % LINK_PERIODS;
    return Math.floor((p + off) / LINK_PERIODS);
  }

  #linkStartMs(n: NativeUserRef, g: number): number {
    const off = hash32(this.seed, "link-offset", n.id) % LINK_PERIODS;
    return (g * LINK_PERIODS - off) * CHANGE_PERIOD_MS;
  }

  /** The NativeUserIdentityLink messages now, in id order. */
  links(nowMs: number): Record<string, unknown>[] {
    const out: Record<string, unknown>[] = [];
    const humans = this.index.humans;
    for (const n of this.nativeUsers) {
      if (!this.nativeUserPresent(n, nowMs)) continue;
      const g = this.#linkGeneration(n, periodOf(nowMs));
      if (pct(this.seed, "link-has", n.id, g) >= 80) continue;
      const kind = pct(this.seed, "link-kind", n.id, g);
      const pickN = hash32(this.seed, "link-who", n.id, g);
      const createdMs = this.#linkStartMs(n, g);
      const base = {
        id: `nul_${hashId(20, this.seed, "link", n.id, g)}`,
        nativeUser: this.nativeUser(n, nowMs),
        terminationProtection: false,
        createdAt: ts(createdMs),
        updatedAt: ts(createdMs),
      };
      const human =
        humans.length > 0 ? humans[pickN % humans.length] : undefined;
      if (kind < 70 && human) {
        const user = this.user(human.id, nowMs);
        if (!user) continue;
        out.push(compact({ ...base, user }));
      } else if (kind < 90 || !human) {
        const group = this.org.groups[pickN % this.org.groups.length];
        if (!group) continue;
        out.push(
          compact({ ...base, group: { id: group.id, name: group.name } }),
        );
      } else {
        out.push(
          compact({
            ...base,
            resourceHostname: {
              id: `rh_${hashId(20, this.seed, "rh", n.resource.id)}`,
              name: `${n.resource.name}-alias`,
              hostname: n.resource.hostname,
            },
          }),
        );
      }
    }
    return out.sort((a, b) => String(a.id).localeCompare(String(b.id)));
  }

  // ---------------------------------------------------------------------------------------
  // Inventory

  /**
   * The inventory objects now, in a stable order. The resources of database technologies
   * take six forms in turn: a datastore with everything nested, or its dbs, schemas, tables,
   * columns and sub-columns on their own, or its tables with some columns repeated on their
   * own; so a reader must handle every kind and de-duplicate by id.
   */
  inventory(nowMs: number): Record<string, unknown>[] {
    const p = periodOf(nowMs);
    const out: Record<string, unknown>[] = [];
    let n = 0;
    for (const r of this.org.resources) {
      if (!INVENTORY_TECHS.has(r.technology)) continue;
      const { ds, subColumnsOf } = this.#datastore(r, p);
      // In turn, so that six resources show every form.
      const form = n++ % 6;
      const dbs = ds.dbs as Record<string, unknown>[];
      const schemas = dbs.flatMap(
        (d) => d.schemas as Record<string, unknown>[],
      );
      const tables = schemas.flatMap(
        (s) => s.tables as Record<string, unknown>[],
      );
      const columns = tables.flatMap(
        (t) => t.columns as Record<string, unknown>[],
      );
      if (form === 0) out.push({ datastore: ds });
      else if (form === 1) out.push(...dbs.map((db) => ({ db })));
      else if (form === 2) out.push(...schemas.map((schema) => ({ schema })));
      else if (form === 3) out.push(...tables.map((table) => ({ table })));
      else if (form === 4) {
        for (const column of columns) {
          out.push({ column });
          for (const sub of subColumnsOf.get(String(column.id)) ?? [])
            out.push({ subColumn: sub });
        }
      } else {
        out.push(...tables.map((table) => ({ table })));
        out.push(...columns.slice(0, 3).map((column) => ({ column })));
      }
    }
    return out;
  }

  #datastore(
    r: SimResource,
    p: number,
  ): {
    ds: Record<string, unknown>;
    subColumnsOf: Map<string, Record<string, unknown>[]>;
  } {
    const subColumnsOf = new Map<string, Record<string, unknown>[]>();
    const created = this.#createdMs("datastore", r.id);
    const base = (path: string) => ({
      id: `inv_${hashId(20, this.seed, "inventory", r.id, path)}`,
      resourceId: r.id,
      resourceName: r.name,
      path,
      createdAt: ts(created),
      updatedAt: ts(created),
    });
    const dbNames =
      hash32(this.seed, "dbs", r.id) % 2 === 0 ? ["app"] : ["app", "analytics"];
    const dbs = dbNames.map((dbName) => {
      const schemaNames =
        dbName === "app" ? ["public"] : ["public", "reporting"];
      const schemas = schemaNames.map((schemaName) => {
        const start = hash32(this.seed, "tables", r.id, dbName, schemaName);
        const count = 2 + (start % 2);
        const tables = Array.from({ length: count }, (_, i) => {
          const t = TABLES[(start + i * 3) % TABLES.length];
          if (!t) throw new Error("unreachable: no tables");
          const tablePath = `${dbName}.${schemaName}.${t.name}`;
          const columns = t.columns
            .map((c) =>
              this.#column(
                r,
                `${tablePath}.${c.name}`,
                c.name,
                c.label,
                p,
                created,
              ),
            )
            .filter((c): c is Record<string, unknown> => c !== undefined);
          if (t.columns.some((c) => c.label !== "none")) {
            const meta = this.#column(
              r,
              `${tablePath}.metadata`,
              "metadata",
              "none",
              p,
              created,
              "jsonb",
            );
            if (meta) {
              const subs = [
                this.#column(
                  r,
                  `${tablePath}.metadata.contact_email`,
                  "contact_email",
                  "email",
                  p,
                  created,
                  "text",
                  "subColumn",
                ),
                this.#column(
                  r,
                  `${tablePath}.metadata.birth_date`,
                  "birth_date",
                  "date_of_birth",
                  p,
                  created,
                  "text",
                  "subColumn",
                ),
              ].filter((c) => c !== undefined);
              subColumnsOf.set(String(meta.id), subs);
              columns.push(meta);
            }
          }
          return { ...base(tablePath), name: t.name, columns };
        });
        return { ...base(`${dbName}.${schemaName}`), name: schemaName, tables };
      });
      return { ...base(dbName), name: dbName, schemas };
    });
    const ds = {
      id: `ds_${hashId(20, this.seed, "datastore", r.id)}`,
      name: r.name,
      technology: r.technology,
      dbs,
      createdAt: ts(created),
      updatedAt: ts(created),
    };
    return { ds, subColumnsOf };
  }

  /** The label of a column in period p: its catalog label, relabelled in ~4 % of periods. */
  #label(path: string, label: string, p: number): string {
    if (pct(this.seed, "relabel", path, p) < 4) {
      const l =
        DATA_LABELS[
          hash32(this.seed, "relabel-to", path, p) % DATA_LABELS.length
        ];
      return l ?? label;
    }
    return label;
  }

  #column(
    r: SimResource,
    path: string,
    name: string,
    label: string,
    p: number,
    createdMs: number,
    dataType = "text",
    kind: "column" | "subColumn" = "column",
  ): Record<string, unknown> | undefined {
    // Gone in ~1 % of periods; marked for deletion in another ~1 %.
    const fate = pct(this.seed, "column-fate", r.id, path, p);
    if (fate < 1) return undefined;
    const now = this.#label(path, label, p);
    const shown = now === "none" ? "" : now;
    const updatedMs = lastChangeMs(
      p,
      (q) => this.#label(path, label, q),
      createdMs,
    );
    return compact({
      id: `inv_${hashId(20, this.seed, "inventory", r.id, path)}`,
      resourceId: r.id,
      resourceName: r.name,
      name,
      path,
      dataLabel: shown,
      dataLabelV2: shown,
      dataType,
      dataTypeOid: dataType === "jsonb" ? 3802 : 25,
      dataLabelLockedForSidecar:
        kind === "column" && pct(this.seed, "locked", path) < 10,
      tags: shown === "" ? [] : ["classified"],
      createdAt: ts(createdMs),
      updatedAt: ts(updatedMs),
      markedForDeletionAt: fate < 2 ? ts(p * CHANGE_PERIOD_MS) : undefined,
    });
  }

  // ---------------------------------------------------------------------------------------
  // Policy suspensions (SUSPENSION_MODEL): one created in every `spacingMs` slot (at a point drawn in
  // it), a third of them extended half way through, which makes a second version.

  suspensions(nowMs: number): Record<string, unknown>[] {
    const out: Record<string, unknown>[] = [];
    const last = Math.floor((nowMs - ORIGIN_MS) / SUSPENSION_MODEL.spacingMs);
    const first = Math.max(
      0,
      last - Math.ceil(SUSPENSION_MODEL.listedMs / SUSPENSION_MODEL.spacingMs),
    );
    for (let k = first; k <= last; k++) {
      const s = this.#suspension(k, nowMs);
      if (s) out.push(s);
    }
    return out;
  }

  #suspension(k: number, nowMs: number): Record<string, unknown> | undefined {
    const createdMs =
      ORIGIN_MS +
      k * SUSPENSION_MODEL.spacingMs +
      (hash32(this.seed, "sus-at", k) % SUSPENSION_MODEL.spacingMs);
    if (createdMs > nowMs) return undefined;
    const policies = policyCatalog(this.seed);
    const policy =
      policies[hash32(this.seed, "sus-policy", k) % policies.length];
    const humans = this.index.humans;
    const toGroup =
      pct(this.seed, "sus-group", k) < SUSPENSION_MODEL.groupPercent ||
      humans.length === 0;
    const who = hash32(this.seed, "sus-who", k);
    const identityId = toGroup
      ? (this.org.groups[who % this.org.groups.length]?.id ?? "")
      : (humans[who % humans.length]?.id ?? "");
    const admin =
      humans[hash32(this.seed, "sus-admin", k) % Math.max(1, humans.length)];
    const indefinite =
      pct(this.seed, "sus-indefinite", k) < SUSPENSION_MODEL.indefinitePercent;
    const durationMs =
      HOUR_MS *
      (1 + (hash32(this.seed, "sus-duration", k) % SUSPENSION_MODEL.maxHours));
    let expireMs = createdMs + durationMs;
    let updatedMs = createdMs;
    const extendAt = createdMs + Math.floor(durationMs / 2);
    if (
      !indefinite &&
      pct(this.seed, "sus-extend", k) < SUSPENSION_MODEL.extendPercent &&
      nowMs >= extendAt
    ) {
      expireMs += durationMs;
      updatedMs = extendAt;
    }
    const resource = this.org.resources[who % this.org.resources.length];
    return compact({
      id: `sus_${hashId(20, this.seed, "suspension", k)}`,
      policyId: policy?.id,
      orgId: this.orgId,
      identityType: toGroup ? "group" : "user",
      identityId,
      createdBy: admin?.email ?? "admin",
      requestId: `req_${hashId(16, this.seed, "sus-request", k)}`,
      suspensionType: indefinite ? "indefinite" : "temporary",
      inputCondition: resource ? `resource.name == "${resource.name}"` : "",
      expireAt: indefinite ? undefined : ts(expireMs),
      createdAt: ts(createdMs),
      updatedAt: ts(updatedMs),
    });
  }

  // ---------------------------------------------------------------------------------------
  // Cloud integrations: an AWS and a GCP one always, a second AWS one present ~70 % of periods.

  clouds(nowMs: number): Record<string, unknown>[] {
    const p = periodOf(nowMs);
    const account = String(
      100000000000 + (hash32(this.seed, "aws-account") % 899999999999),
    );
    const on = (name: string, switchName: string, q = p) =>
      pct(this.seed, "cloud-switch", name, switchName, q) < 85;
    const updated = (name: string, switches: readonly string[]) =>
      ts(
        lastChangeMs(
          p,
          (q) => switches.map((s) => on(name, s, q)),
          this.#createdMs("cloud", name),
        ),
      );
    const aws = (name: string, region: string) => {
      const switches = AWS_SWITCHES.map((s) => [s, on(name, s)] as const);
      return compact({
        id: `cld_${hashId(20, this.seed, "cloud", name)}`,
        name,
        active: true,
        createdAt: ts(this.#createdMs("cloud", name)),
        updatedAt: updated(name, AWS_SWITCHES),
        aws: compact({
          awsAccountId: account,
          awsCloudRegion: region,
          awsServiceId: `svc-${hashId(10, this.seed, "aws-svc", name)}`,
          awsServiceIamRole: `${this.org.domain.split(".")[0] ?? "org"}-control-plane`,
          awsCustomerRoleArn: `arn:aws:iam::${account}:role/control-plane-discovery`,
          awsServiceStackName: `control-plane-${name}`,
          awsTemplateVersion: "3",
          ...Object.fromEntries(switches),
        }),
      });
    };
    const gcpName = "gcp-analytics";
    const gcpSwitches = GCP_SWITCHES.map((s) => [s, on(gcpName, s)] as const);
    const project = `${this.org.domain.split(".")[0] ?? "org"}-analytics`;
    const out = [
      aws("aws-production", "us-east-1"),
      compact({
        id: `cld_${hashId(20, this.seed, "cloud", gcpName)}`,
        name: gcpName,
        active: true,
        createdAt: ts(this.#createdMs("cloud", gcpName)),
        updatedAt: updated(gcpName, GCP_SWITCHES),
        gcp: compact({
          name: gcpName,
          projectId: project,
          projectNumber:
            100000000 + (hash32(this.seed, "gcp-project") % 899999999),
          serviceAccountEmail: `discovery@${project}.iam.gserviceaccount.com`,
          ...Object.fromEntries(gcpSwitches),
        }),
      }),
    ];
    if (pct(this.seed, "cloud-sandbox", p) < 70)
      out.push(aws("aws-sandbox", "eu-west-1"));
    return out;
  }
}

const LINK_PERIODS = 8;
/**
 * How policy suspensions are made: one created in every `spacingMs` slot (at a point drawn in
 * it), `groupPercent` of them on a group and the others on a person, for 1 to `maxHours` hours
 * or (`indefinitePercent`) indefinitely, `extendPercent` of the timed ones extended half way (a
 * second version). A suspension is listed until `listedMs` after its slot's start.
 */
export const SUSPENSION_MODEL = {
  spacingMs: 2 * HOUR_MS,
  listedMs: 30 * DAY_MS,
  groupPercent: 20,
  indefinitePercent: 10,
  extendPercent: 33,
  maxHours: 72,
} as const;

const INVENTORY_TECHS: ReadonlySet<Technology> = new Set<Technology>([
  "postgres",
  "mysql",
  "mariadb",
  "mssqlserver",
  "snowflake",
  "bigquery",
  "clickhouse",
  "mongodb",
  "athena",
]);

const AWS_SWITCHES = [
  "awsEnableEksAutodiscovery",
  "awsEnableRdsAutodiscovery",
  "awsEnableRedshiftAutodiscovery",
  "awsAllowS3Access",
  "awsEnableEc2Autodiscovery",
  "awsEnableEcsAutodiscovery",
  "awsEnableS3Autodiscovery",
] as const;

const GCP_SWITCHES = [
  "gcpEnableComputeInstancesAutodiscovery",
  "gcpEnableGkeClustersAutodiscovery",
  "gcpEnableCloudsqlInstancesAutodiscovery",
] as const;
