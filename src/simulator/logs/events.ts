// Deterministic log events of the simulated organisation.
//
// Every session yields a fixed list of events, a pure function of (seed, session): timestamps
// lie in [startMs, startMs + durationMs] and an event becomes visible once the clock passes it,
// so a window that covers open sessions keeps growing as the clock advances (late data), like the
// real service. Control-plane and workflow events are a pure function of (seed, hour).
//
// Events are generated per session, only for sessions that overlap the requested window (most
// sessions are short, yet one may last days), and kept in a bounded LRU. Values are shared
// wherever possible (a session's context, a query template, a set of triggered policies), which
// keeps the cache small and lets the aggregation count shared groups once with a weight.

import type { SimOrg, SimResource, SimSession, SimUser, Technology } from "../model.js";
import {
  COMMAND_TEMPLATES,
  COMMANDS,
  EVENT_KIND_OF,
  KEYVALUE_TEMPLATES,
  LLM_PROVIDERS,
  LLM_TOOLS,
  literalFor,
  MASKING_POLICY_OF_LABEL,
  MCP_TOOLS,
  REQUEST_TEMPLATES,
  SENSITIVE_LABELS,
  SESSION_TYPE_OF,
  TABLES,
  desktopDeviceOf,
  policyCatalog,
  userSubTypeOf,
  workflowCatalog,
  type SimPolicy,
  type SimTable,
  type SimWorkflow,
} from "./catalog.js";
import { FieldGroup, normalizeValue, type FieldValue, type LogEvent, type LogField } from "./fields.js";
import { hash32, hexOf, itemAt, Rng } from "./prng.js";

export const HOUR_MS = 3_600_000;

/** What the log generator needs from the session generator (sessions.ts satisfies it). */
export interface LogSessionSource {
  readonly org: SimOrg;
  /** No session lasts longer; bounds how far back a window must look for open sessions. */
  readonly maxDurationMs: number;
  /** Nothing happens before this instant (control-plane events included), when given. */
  readonly historyStartMs?: number;
  /** Sessions with startMs in [fromMs, toMs), sorted by startMs. */
  sessionsStartingIn(fromMs: number, toMs: number): readonly SimSession[];
  /** Same as sessionsStartingIn over one UTC hour, without a copy, when the source has it. */
  sessionsInHour?(hour: number): readonly SimSession[];
}

export interface LogEventStoreOptions {
  seed: number;
  /** Sessions whose events are kept in memory (default 50 000, about five days of the default org). */
  cacheSessions?: number;
}

/** Events per session: a few, more for long sessions, never more than this. */
export const MAX_EVENTS_PER_SESSION = 60;

const TEMPLATE_VARIANTS = 24;

type Fields = Partial<Record<LogField, FieldValue | undefined>>;

interface Template {
  readonly source: string;
  readonly kind: "read" | "bulk" | "count" | "point" | "write" | "ddl" | "command";
  readonly labels: ReadonlySet<string>;
  readonly group: FieldGroup;
  /** The same statement when a blocking policy stopped it: no columns came back. */
  readonly blockedGroup: FieldGroup;
  readonly weight: number;
  readonly variants: (string | undefined)[];
  readonly variantSeed: number;
}

interface ResourceProfile {
  readonly resource: SimResource | undefined;
  readonly technology: Technology | undefined;
  readonly base: Fields;
  readonly isProd: boolean;
  readonly templates: readonly Template[];
  readonly templateWeights: readonly number[];
  readonly llmProvider: string;
  readonly llmModels: readonly string[];
}

export class LogEventStore {
  readonly seed: number;
  readonly policies: readonly SimPolicy[];
  readonly workflows: readonly SimWorkflow[];
  readonly #source: LogSessionSource;
  readonly #cacheSessions: number;
  readonly #sessionCache = new Map<string, readonly LogEvent[]>();
  readonly #controlCache = new Map<number, readonly LogEvent[]>();
  readonly #profiles = new Map<string, ResourceProfile>();
  readonly #policyGroups = new Map<string, FieldGroup>();
  readonly #policyByName: ReadonlyMap<string, SimPolicy>;
  readonly #users: ReadonlyMap<string, SimUser>;
  readonly #groupNames: ReadonlyMap<string, string>;
  readonly #humans: readonly SimUser[];
  readonly #machines: readonly SimUser[];

  constructor(source: LogSessionSource, opts: LogEventStoreOptions) {
    this.seed = opts.seed;
    this.#source = source;
    this.#cacheSessions = Math.max(1, opts.cacheSessions ?? 50_000);
    this.policies = policyCatalog(opts.seed);
    this.workflows = workflowCatalog(opts.seed);
    this.#policyByName = new Map(this.policies.map((p) => [p.name, p]));
    const org = source.org;
    this.#users = new Map(org.users.map((u) => [u.id, u]));
    this.#groupNames = new Map(org.groups.map((g) => [g.id, g.name]));
    this.#humans = org.users.filter((u) => u.type === "human");
    this.#machines = org.users.filter((u) => u.type === "machine");
  }

  /** Visits every event with startMs <= ts < endMs; the caller caps endMs at the clock's now. */
  forEachInWindow(startMs: number, endMs: number, visit: (ev: LogEvent) => void): void {
    if (!(endMs > startMs)) return;
    const src = this.#source;
    let first = Math.floor((startMs - src.maxDurationMs) / HOUR_MS);
    if (src.historyStartMs !== undefined) first = Math.max(first, Math.floor(src.historyStartMs / HOUR_MS));
    const firstInWindow = Math.floor(startMs / HOUR_MS);
    const last = Math.floor((endMs - 1) / HOUR_MS);
    for (let h = first; h <= last; h++) {
      if (h >= firstInWindow) visitRange(this.#controlEvents(h), startMs, endMs, visit);
      const sessions = src.sessionsInHour?.(h) ?? src.sessionsStartingIn(h * HOUR_MS, (h + 1) * HOUR_MS);
      for (const s of sessions) {
        if (s.startMs >= endMs) break;
        // Events lie in [startMs, startMs + durationMs]: skip sessions over before the window.
        if (s.startMs + Math.max(0, s.durationMs) < startMs) continue;
        visitRange(this.#cachedSessionEvents(s), startMs, endMs, visit);
      }
    }
  }

  /** All events of one session, visible or not, sorted by time. */
  eventsOfSession(session: SimSession): readonly LogEvent[] {
    return this.#cachedSessionEvents(session);
  }

  #cachedSessionEvents(s: SimSession): readonly LogEvent[] {
    const cache = this.#sessionCache;
    const hit = cache.get(s.id);
    if (hit !== undefined) {
      // Re-inserting marks it most recently used (Map keeps insertion order).
      cache.delete(s.id);
      cache.set(s.id, hit);
      return hit;
    }
    const events = this.#sessionEvents(s);
    cache.set(s.id, events);
    if (cache.size > this.#cacheSessions) {
      const oldest = cache.keys().next();
      if (oldest.done !== true) cache.delete(oldest.value);
    }
    return events;
  }

  #controlEvents(hour: number): readonly LogEvent[] {
    const hit = this.#controlCache.get(hour);
    if (hit !== undefined) return hit;
    const events = this.controlPlaneEvents(hour);
    this.#controlCache.set(hour, events);
    if (this.#controlCache.size > 24 * 30) {
      const oldest = this.#controlCache.keys().next();
      if (oldest.done !== true) this.#controlCache.delete(oldest.value);
    }
    return events;
  }

  /** Control-plane and workflow events with ts in hour h (h = epoch ms / 1 h). */
  controlPlaneEvents(hour: number): readonly LogEvent[] {
    const hourStart = hour * HOUR_MS;
    const historyStart = this.#source.historyStartMs;
    if (historyStart !== undefined && hourStart + HOUR_MS <= historyStart) return [];
    const rng = new Rng(hash32(this.seed, "control-plane", hour));
    const out: LogEvent[] = [];
    const commands = 1 + rng.int(4);
    for (let i = 0; i < commands; i++) {
      const c = rng.weighted(
        COMMANDS,
        COMMANDS.map((x) => x.weight),
      );
      const actor = this.#actor(rng);
      out.push(
        event(hourStart + rng.int(HOUR_MS), [], {
          "control_plane.command_name": c.commandName,
          "control_plane.command_type": c.commandType,
          "control_plane.policy_action": c.policyAction,
          "control_plane.service": c.service,
          "control_plane.method": c.method,
          "control_plane.user_email": actor?.email,
          "control_plane.user_type": actor?.type,
          "control_plane.user_id": actor?.id,
        }),
      );
    }
    const runs = rng.weighted([0, 1, 2], [3, 4, 2]);
    for (let r = 0; r < runs; r++) {
      const wf = rng.pick(this.workflows);
      const manual = wf.triggerType === "manual";
      const by = manual ? rng.pick(this.#humans.length > 0 ? this.#humans : [undefined]) : undefined;
      // Steps stay inside the hour so that the hour's cache entry holds the whole run.
      let ts = hourStart + rng.int(HOUR_MS - 600_000);
      const trigger: Fields = {
        "workflow.id": wf.id,
        "workflow.name": wf.name,
        "trigger.type": wf.triggerType,
        "trigger.name": wf.triggerName,
        "trigger.user_email": by?.email,
        "trigger.user_type": by?.type,
        "trigger.user_id": by?.id,
      };
      for (const step of wf.steps) {
        ts += 200 + rng.int(60_000);
        out.push(event(ts, [], { ...trigger, "step.name": step.name, "step.type": step.type }));
      }
    }
    return out
      .filter((e) => historyStart === undefined || e.ts >= historyStart)
      .sort((a, b) => a.ts - b.ts);
  }

  #actor(rng: Rng): SimUser | undefined {
    if (this.#machines.length > 0 && rng.chance(0.2)) return rng.pick(this.#machines);
    if (this.#humans.length > 0) return rng.pick(this.#humans.slice(0, 8));
    return undefined;
  }

  #sessionEvents(s: SimSession): LogEvent[] {
    const profile = this.#profile(s.resourceId);
    const ctx = this.#sessionContext(s, profile);
    const rng = new Rng(hash32(this.seed, "events", s.id));
    const duration = Math.max(0, s.durationMs);
    const n = Math.min(
      MAX_EVENTS_PER_SESSION,
      2 + rng.int(7) + Math.floor(Math.sqrt(duration / 60_000) * 1.5),
    );
    const times: number[] = [s.startMs];
    for (let i = 1; i < n; i++) times.push(s.startMs + Math.floor(rng.next() * (duration + 1)));
    times.sort((a, b) => a - b);
    const user = this.#users.get(s.userId);
    const startHourUtc = new Date(s.startMs).getUTCHours();
    const kind = profile.technology === undefined ? "screen" : EVENT_KIND_OF[profile.technology];
    const out: LogEvent[] = [];
    for (let i = 0; i < n; i++) {
      const fired: string[] = [];
      if (i === 0) {
        if (user?.type === "human" && rng.chance(0.3)) fired.push("session-require-mfa");
        if ((startHourUtc < 6 || startHourUtc >= 20) && rng.chance(0.5)) fired.push("session-block-after-hours");
      }
      if (i === n - 1 && duration > 8 * HOUR_MS) fired.push("session-max-duration-8h");
      const own: Fields = {};
      const shared: FieldGroup[] = [ctx];
      switch (kind) {
        case "sql":
        case "document":
        case "keyvalue":
          this.#queryEvent(rng, profile, fired, own, shared);
          break;
        case "request":
        case "command":
          this.#requestEvent(rng, profile, kind, fired, own, shared);
          break;
        case "llm":
        case "mcp":
          this.#llmEvent(rng, profile, kind, fired, own);
          break;
        case "screen":
          break;
      }
      const policies = this.#policyGroup(fired);
      if (policies !== undefined) shared.push(policies);
      out.push(event(itemAt(times, i), shared, own));
    }
    return out;
  }

  #queryEvent(rng: Rng, p: ResourceProfile, fired: string[], own: Fields, shared: FieldGroup[]): void {
    if (p.templates.length === 0) return;
    const t = rng.weighted(p.templates, p.templateWeights);
    for (const label of t.labels) {
      const masking = MASKING_POLICY_OF_LABEL[label];
      if (masking !== undefined && rng.chance(0.9)) fired.push(masking);
    }
    if ([...t.labels].some((l) => SENSITIVE_LABELS.has(l)) && rng.chance(0.4)) {
      fired.push("notify-sensitive-table-access");
    }
    if (t.kind === "ddl" && p.isProd) fired.push("block-prod-ddl");
    if (t.kind === "bulk" && rng.chance(0.3)) fired.push("block-bulk-export");
    const filtered = (t.kind === "read" || t.kind === "bulk") && p.isProd && rng.chance(0.15);
    if (filtered) fired.push(rng.chance(0.5) ? "filter-tenant-rows" : "filter-rows-by-region");
    const blocked = fired.some((name) => {
      const pol = this.#policyByName.get(name);
      return pol?.type === "blocking" && pol.status === "active";
    });
    const received = variantOf(t, rng.int(TEMPLATE_VARIANTS));
    own["query.received"] = received;
    shared.push(blocked ? t.blockedGroup : t.group);
    if (blocked) {
      own["response.rows_received"] = "0";
      own["response.rows_sent"] = "0";
      return;
    }
    own["query.sent"] = received;
    const rows = rowsFor(t.kind, rng);
    const sent = filtered ? Math.floor(rows * (0.1 + 0.8 * rng.next())) : rows;
    own["response.rows_received"] = String(rows);
    own["response.rows_sent"] = String(sent);
    own["response.data_volume"] = String(96 + sent * (24 + rng.int(400)));
  }

  #requestEvent(
    rng: Rng,
    p: ResourceProfile,
    kind: "request" | "command",
    fired: string[],
    own: Fields,
    shared: FieldGroup[],
  ): void {
    if (p.templates.length === 0) return;
    const t = rng.weighted(p.templates, p.templateWeights);
    if (kind === "request" && /customers|employees|users/.test(t.source) && rng.chance(0.3)) {
      fired.push("mask-pii-emails");
    }
    if (kind === "command" && /secret|shadow/.test(t.source) && rng.chance(0.5)) {
      fired.push("notify-sensitive-table-access");
    }
    const received = variantOf(t, rng.int(TEMPLATE_VARIANTS));
    shared.push(t.group);
    own["query.received"] = received;
    own["query.sent"] = received;
    if (kind === "request") own["response.data_volume"] = String(200 + rng.int(64_000));
  }

  #llmEvent(rng: Rng, p: ResourceProfile, kind: "llm" | "mcp", fired: string[], own: Fields): void {
    const model = rng.weighted(
      p.llmModels,
      p.llmModels.map((_, i) => 1 / (i + 1)),
    );
    let tools: string[] = [];
    if (kind === "mcp") tools = rng.sample(MCP_TOOLS, 1 + rng.int(3));
    else if (rng.chance(0.35)) tools = rng.sample(LLM_TOOLS, 1 + rng.int(2));
    if (rng.chance(0.08)) fired.push("notify-llm-pii-prompt");
    if (rng.chance(0.1)) fired.push("mask-llm-pii-responses");
    const secrets = rng.chance(0.02);
    if (secrets) fired.push("block-llm-secrets");
    let stop = tools.length > 0 ? "tool_calls" : rng.weighted(["stop", "length"], [95, 5]);
    if (secrets || rng.chance(0.01)) stop = "content_filter";
    own["llm.provider"] = p.llmProvider;
    own["llm.model"] = model;
    own["llm.tool_call_names"] = tools;
    own["llm.tool_call_count"] = String(tools.length);
    own["llm.stop_reason"] = stop;
  }

  #policyGroup(names: readonly string[]): FieldGroup | undefined {
    if (names.length === 0) return undefined;
    const picked = this.policies.filter((p) => names.includes(p.name));
    const key = picked.map((p) => p.name).join(",");
    let g = this.#policyGroups.get(key);
    if (g === undefined) {
      g = new FieldGroup({
        "policy.id": picked.map((p) => p.id),
        "policy.name": picked.map((p) => p.name),
        "policy.status": picked.map((p) => p.status),
        "policy.type": picked.map((p) => p.type),
      });
      this.#policyGroups.set(key, g);
    }
    return g;
  }

  #sessionContext(s: SimSession, p: ResourceProfile): FieldGroup {
    const user = this.#users.get(s.userId);
    const endUser = s.endUserId === "" ? undefined : this.#users.get(s.endUserId);
    const fields: Fields = {
      ...p.base,
      "session.id": s.id,
      "session.application_name": s.applicationName,
      "session.client_ip_address": s.clientIpAddress,
    };
    if (user !== undefined) {
      fields["user.type"] = user.type;
      fields["user.sub_type"] = userSubTypeOf(this.seed, user);
      fields["user.email"] = user.email;
      fields["user.username"] = user.username;
      fields["user.id"] = user.id;
      fields["user.groups"] = this.#groupsOf(user);
      // Only people run the desktop app, and not for every session.
      const device = desktopDeviceOf(this.seed, user);
      if (device !== undefined && hash32(this.seed, "desktop", s.id) % 100 < 65) {
        fields["device.system_version"] = device.systemVersion;
        fields["device.kernel_version"] = device.kernelVersion;
        fields["device.computer_name"] = device.computerName;
        fields["device.user_name"] = device.userName;
        fields["device.model_name"] = device.modelName;
        fields["device.model_identifier"] = device.modelIdentifier;
        fields["device.model_number"] = device.modelNumber;
        fields["device.serial_number"] = device.serialNumber;
      }
    }
    if (endUser !== undefined) {
      fields["end_user.type"] = endUser.type;
      fields["end_user.name"] = endUser.name;
      fields["end_user.email"] = endUser.email;
      fields["end_user.groups"] = this.#groupsOf(endUser);
    }
    return new FieldGroup(fields);
  }

  #groupsOf(user: SimUser): string[] {
    const out: string[] = [];
    for (const id of user.groupIds) {
      const name = this.#groupNames.get(id);
      if (name !== undefined) out.push(name);
    }
    return out;
  }

  #profile(resourceId: string): ResourceProfile {
    let p = this.#profiles.get(resourceId);
    if (p === undefined) {
      p = this.#buildProfile(resourceId);
      this.#profiles.set(resourceId, p);
    }
    return p;
  }

  #buildProfile(resourceId: string): ResourceProfile {
    const org = this.#source.org;
    const resource = org.resources.find((r) => r.id === resourceId);
    const tech = resource?.technology;
    const base: Fields = { "resource.id": resourceId };
    const rng = new Rng(hash32(this.seed, "profile", resourceId));
    if (resource !== undefined && tech !== undefined) {
      const space = org.spaces.find((sp) => sp.id === resource.spaceId);
      const connectorId = org.connectorOfResource.get(resource.id);
      const connector = org.connectors.find((c) => c.id === connectorId);
      Object.assign(base, {
        "session.type": SESSION_TYPE_OF[tech],
        "session.server_ip_address": resource.serverIpAddress,
        "resource.name": resource.name,
        "resource.type": resource.type,
        "resource.hostname": resource.hostname,
        "resource.technology": tech,
        "resource.environment": resource.environment,
        "space.id": space?.id,
        "space.name": space?.name,
        "connector.id": connector?.id,
        "connector.name": connector?.name,
      } satisfies Fields);
    }
    const templates = tech === undefined ? [] : this.#templatesFor(tech, resource, rng);
    const providers = Object.keys(LLM_PROVIDERS);
    const llmProvider = rng.pick(providers);
    return {
      resource,
      technology: tech,
      base,
      isProd: /prod/i.test(resource?.environment ?? ""),
      templates,
      templateWeights: templates.map((t) => t.weight),
      llmProvider,
      llmModels: rng.sample(LLM_PROVIDERS[llmProvider] ?? [], 3),
    };
  }

  #templatesFor(tech: Technology, resource: SimResource | undefined, rng: Rng): Template[] {
    const kind = EVENT_KIND_OF[tech];
    const resourceKey = resource?.id ?? "";
    const specs: TemplateSpec[] = [];
    if (kind === "sql" || kind === "document") {
      const db = (resource?.name ?? "db").replace(/-/g, "_");
      const schema = SCHEMA_OF[tech] ?? db;
      for (const table of rng.sample(TABLES, 3 + rng.int(2))) {
        specs.push(...tableTemplates(tech, table, `${db}.${schema}.${table.name}`, rng));
      }
    } else if (kind === "keyvalue") {
      specs.push(...KEYVALUE_TEMPLATES.map((source) => ({ source, kind: "command" as const, columns: [] })));
    } else {
      const list = (kind === "request" ? REQUEST_TEMPLATES : COMMAND_TEMPLATES)[tech] ?? [];
      specs.push(...list.map((source) => ({ source, kind: "command" as const, columns: [] })));
    }
    return specs.map((spec, i) => {
      const normalized = normalize(spec.source);
      const fingerprint = hexOf(16, "fingerprint", normalized);
      const common: Fields = { "query.normalized": normalized, "query.fingerprint": fingerprint };
      return {
        source: spec.source,
        kind: spec.kind,
        labels: new Set(spec.columns.map((c) => c.label)),
        group: new FieldGroup({
          ...common,
          "response.returned_columns.name": spec.columns.map((c) => c.name),
          "response.returned_columns.path": spec.columns.map((c) => c.path),
          "response.returned_columns.data_label": spec.columns.map((c) => c.label),
        }),
        blockedGroup: new FieldGroup(common),
        weight: spec.weight ?? 1 + rng.int(5),
        variants: [],
        variantSeed: hash32(this.seed, "variants", resourceKey, i),
      };
    });
  }
}

interface ReturnedColumn {
  readonly name: string;
  readonly path: string;
  readonly label: string;
}

interface TemplateSpec {
  readonly source: string;
  readonly kind: Template["kind"];
  readonly columns: readonly ReturnedColumn[];
  readonly weight?: number;
}

const SCHEMA_OF: Partial<Record<Technology, string>> = {
  postgres: "public",
  mssqlserver: "dbo",
  snowflake: "PUBLIC",
  bigquery: "analytics",
  clickhouse: "default",
  athena: "default",
  mongodb: "main",
  dynamodb: "main",
  elastic: "main",
};

function tableTemplates(tech: Technology, table: SimTable, prefix: string, rng: Rng): TemplateSpec[] {
  const ret = (names: readonly string[]): ReturnedColumn[] =>
    table.columns
      .filter((c) => names.includes(c.name))
      .map((c) => ({ name: c.name, path: `${prefix}.${c.name}`, label: c.label }));
  const all = ret(table.columns.map((c) => c.name));
  const t = table.name;
  const [c1, c2] = rng.sample(table.columns.slice(1), 2);
  const where = rng.pick(table.columns.slice(1));
  const lit = (c: { literal: string }): string =>
    c.literal === "id" || c.literal === "amount" || c.literal === "n" ? `{${c.literal}}` : `'{${c.literal}}'`;
  const picked = [c1, c2].filter((c) => c !== undefined);
  const names = picked.map((c) => c.name);
  const count: ReturnedColumn[] = [{ name: "count", path: "", label: "none" }];
  switch (EVENT_KIND_OF[tech]) {
    case "document":
      if (tech === "dynamodb") {
        return [
          { source: `GetItem ${t} id={id}`, kind: "point", columns: all, weight: 6 },
          { source: `Query ${t} ${where.name}=${lit(where)}`, kind: "read", columns: all, weight: 4 },
          { source: `Scan ${t}`, kind: "bulk", columns: all, weight: 1 },
          { source: `PutItem ${t}`, kind: "write", columns: [], weight: 2 },
          { source: `DeleteItem ${t} id={id}`, kind: "write", columns: [], weight: 1 },
        ];
      }
      if (tech === "elastic") {
        return [
          { source: `GET /${t}/_doc/{id}`, kind: "point", columns: all, weight: 5 },
          { source: `GET /${t}/_search?q=${where.name}:{${where.literal}}`, kind: "read", columns: all, weight: 5 },
          { source: `GET /${t}/_count`, kind: "count", columns: count, weight: 2 },
          { source: `POST /${t}/_doc`, kind: "write", columns: [], weight: 2 },
        ];
      }
      return [
        { source: `db.${t}.find({"_id": {id}})`, kind: "point", columns: all, weight: 5 },
        {
          source: `db.${t}.find({"${where.name}": ${lit(where)}}, {${names.map((n) => `"${n}": 1`).join(", ")}})`,
          kind: "read",
          columns: ret(names),
          weight: 5,
        },
        { source: `db.${t}.countDocuments({})`, kind: "count", columns: count, weight: 2 },
        { source: `db.${t}.insertOne({...})`, kind: "write", columns: [], weight: 2 },
        { source: `db.${t}.deleteOne({"_id": {id}})`, kind: "write", columns: [], weight: 1 },
      ];
    default: {
      const ddl = rng.pick([
        `ALTER TABLE ${t} ADD COLUMN notes TEXT`,
        `DROP TABLE ${t}_backup`,
        `TRUNCATE TABLE ${t}_staging`,
        `CREATE INDEX idx_${t}_created ON ${t} (id)`,
      ]);
      const set = picked[0] ?? where;
      return [
        { source: `SELECT * FROM ${t} WHERE id = {id}`, kind: "point", columns: all, weight: 6 },
        {
          source: `SELECT ${names.join(", ")} FROM ${t} WHERE ${where.name} = ${lit(where)}`,
          kind: "read",
          columns: ret(names),
          weight: 8,
        },
        { source: `SELECT COUNT(*) FROM ${t}`, kind: "count", columns: count, weight: 2 },
        { source: `SELECT * FROM ${t} LIMIT {n}`, kind: "bulk", columns: all, weight: 1 },
        { source: `UPDATE ${t} SET ${set.name} = ${lit(set)} WHERE id = {id}`, kind: "write", columns: [], weight: 2 },
        {
          source: `INSERT INTO ${t} (${names.join(", ")}) VALUES (${picked.map(lit).join(", ")})`,
          kind: "write",
          columns: [],
          weight: 1,
        },
        { source: `DELETE FROM ${t} WHERE id = {id}`, kind: "write", columns: [], weight: 0.5 },
        { source: ddl, kind: "ddl", columns: [], weight: 0.2 },
      ];
    }
  }
}

const PLACEHOLDER = /'\{(\w+)\}'|\{(\w+)\}/g;

function normalize(source: string): string {
  return source.replace(PLACEHOLDER, "?");
}

/** The received text of one literal variant, rendered once and then shared by every event. */
function variantOf(t: Template, i: number): string {
  const cached = t.variants[i];
  if (cached !== undefined) return cached;
  const rng = new Rng(hash32(t.variantSeed, i));
  const text = t.source.replace(PLACEHOLDER, (_m: string, quoted?: string, bare?: string) =>
    quoted !== undefined ? `'${literalFor(quoted, rng)}'` : literalFor(bare ?? "", rng),
  );
  t.variants[i] = text;
  return text;
}

function rowsFor(kind: Template["kind"], rng: Rng): number {
  switch (kind) {
    case "point":
      return rng.chance(0.9) ? 1 : 0;
    case "count":
      return 1;
    case "read":
      return Math.floor(Math.pow(rng.next(), 3) * 500);
    case "bulk":
      return 100 + Math.floor(Math.pow(rng.next(), 2) * 50_000);
    default:
      return 0;
  }
}

function event(ts: number, shared: readonly FieldGroup[], fields: Fields): LogEvent {
  const own: Partial<Record<LogField, FieldValue>> = {};
  for (const key of Object.keys(fields) as LogField[]) {
    const v = normalizeValue(fields[key]);
    if (v !== undefined) own[key] = v;
  }
  return { ts, shared, own };
}

function visitRange(
  events: readonly LogEvent[],
  startMs: number,
  endMs: number,
  visit: (ev: LogEvent) => void,
): void {
  for (let i = lowerBound(events, startMs); i < events.length; i++) {
    const ev = itemAt(events, i);
    if (ev.ts >= endMs) return;
    visit(ev);
  }
}

/** First index whose event is at or after ts (events sorted by ts). */
function lowerBound(events: readonly LogEvent[], ts: number): number {
  let lo = 0;
  let hi = events.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (itemAt(events, mid).ts < ts) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
