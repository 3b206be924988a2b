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

import type {
  SimOrg,
  SimResource,
  SimSession,
  SimUser,
  Technology,
} from "../model.js";
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
import {
  FieldGroup,
  NUMBER_COLUMN,
  type BatchVisitor,
  type EventBatch,
  type Fields,
} from "./fields.js";
import { hash32, hexOf, Rng, WeightedTable } from "../random.js";

const HOUR_MS = 3_600_000;

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

interface LogEventStoreOptions {
  seed: number;
  /**
   * Sessions whose events stay cached (default 30 000: three days of the default org, ~2 KB
   * each). Only sessions overlapping a requested window are generated.
   */
  cacheSessions?: number;
}

/** Hours of control-plane batches kept (they are tiny). */
const CONTROL_CACHE_HOURS = 24 * 31;

/** Events per session: a few, more for long sessions, never more than this. */
const MAX_EVENTS_PER_SESSION = 60;

/** Literal variants per template: enough for varied received texts, few enough to share. */
const TEMPLATE_VARIANTS = 12;

interface Template {
  readonly source: string;
  readonly kind:
    "read" | "bulk" | "count" | "point" | "write" | "ddl" | "command";
  /** Masking policies that apply to the returned columns' labels. */
  readonly masking: readonly string[];
  /** Returns columns labelled ssn, credit_card, iban or date_of_birth. */
  readonly sensitive: boolean;
  readonly group: FieldGroup;
  /** The same statement when a blocking policy stopped it: no columns came back. */
  readonly blockedGroup: FieldGroup;
  readonly weight: number;
  /** Per literal variant: the received text, as a group extending `group` (or `blockedGroup`). */
  readonly variants: (FieldGroup | undefined)[];
  readonly blockedVariants: (FieldGroup | undefined)[];
  readonly variantSeed: number;
  /** Bytes per returned row; rows × width makes the data volume. */
  readonly rowWidth: number;
}

interface ResourceProfile {
  readonly resource: SimResource | undefined;
  readonly technology: Technology | undefined;
  readonly group: FieldGroup;
  readonly isProd: boolean;
  /** Undefined when the technology has no statements (rdp, llm, mcp). */
  readonly templates: WeightedTable<Template> | undefined;
  readonly llmProvider: string;
  readonly llmModels: readonly string[];
}

export class LogEventStore {
  readonly seed: number;
  readonly policies: readonly SimPolicy[];
  readonly workflows: readonly SimWorkflow[];
  readonly #source: LogSessionSource;
  readonly #cacheSessions: number;
  readonly #sessionCache = new Map<string, EventBatch>();
  readonly #controlCache = new Map<number, EventBatch>();
  readonly #profiles = new Map<string, ResourceProfile>();
  readonly #policyGroups = new Map<string, FieldGroup>();
  readonly #userGroups = new Map<string, FieldGroup>();
  readonly #endUserGroups = new Map<string, FieldGroup>();
  readonly #llmGroups = new Map<string, FieldGroup>();
  /** Names of the blocking policies that do block (dry-run and draft ones only log). */
  readonly #activeBlocking: ReadonlySet<string>;
  readonly #users: ReadonlyMap<string, SimUser>;
  readonly #groupNames: ReadonlyMap<string, string>;
  readonly #humans: readonly SimUser[];
  readonly #machines: readonly SimUser[];
  readonly #admins: readonly SimUser[];

  constructor(source: LogSessionSource, opts: LogEventStoreOptions) {
    this.seed = opts.seed;
    this.#source = source;
    this.#cacheSessions = Math.max(1, opts.cacheSessions ?? 30_000);
    this.policies = policyCatalog(opts.seed);
    this.workflows = workflowCatalog(opts.seed);
    this.#activeBlocking = new Set(
      this.policies
        .filter((p) => p.type === "blocking" && p.status === "active")
        .map((p) => p.name),
    );
    const org = source.org;
    this.#users = new Map(org.users.map((u) => [u.id, u]));
    this.#groupNames = new Map(org.groups.map((g) => [g.id, g.name]));
    this.#humans = org.users.filter((u) => u.type === "human");
    this.#machines = org.users.filter((u) => u.type === "machine");
    this.#admins = this.#humans.slice(0, 8);
  }

  /**
   * Visits, batch by batch, every event with startMs <= ts < endMs; the caller caps endMs at
   * the clock's now, which is what makes events after now invisible.
   */
  forEachInWindow(startMs: number, endMs: number, visit: BatchVisitor): void {
    if (!(endMs > startMs)) return;
    const src = this.#source;
    let first = Math.floor((startMs - src.maxDurationMs) / HOUR_MS);
    if (src.historyStartMs !== undefined) {
      first = Math.max(first, Math.floor(src.historyStartMs / HOUR_MS));
    }
    const firstInWindow = Math.floor(startMs / HOUR_MS);
    const last = Math.floor((endMs - 1) / HOUR_MS);
    for (let h = first; h <= last; h++) {
      if (h >= firstInWindow) {
        visitRange(this.#controlBatch(h), startMs, endMs, visit);
      }
      const sessions =
        src.sessionsInHour?.(h) ??
        src.sessionsStartingIn(h * HOUR_MS, (h + 1) * HOUR_MS);
      for (const s of sessions) {
        if (s.startMs >= endMs) break;
        // Events lie in [startMs, startMs + durationMs]: skip sessions over before the window.
        if (s.startMs + Math.max(0, s.durationMs) < startMs) continue;
        visitRange(this.#cachedSessionBatch(s), startMs, endMs, visit);
      }
    }
  }

  /** All events of one session, visible or not, sorted by time. */
  eventsOfSession(session: SimSession): EventBatch {
    return this.#cachedSessionBatch(session);
  }

  #cachedSessionBatch(s: SimSession): EventBatch {
    const cache = this.#sessionCache;
    const hit = cache.get(s.id);
    if (hit !== undefined) {
      // Re-inserting marks it most recently used (Map keeps insertion order).
      cache.delete(s.id);
      cache.set(s.id, hit);
      return hit;
    }
    const batch = this.#sessionBatch(s);
    cache.set(s.id, batch);
    if (cache.size > this.#cacheSessions) {
      const oldest = cache.keys().next();
      if (oldest.done !== true) cache.delete(oldest.value);
    }
    return batch;
  }

  #controlBatch(hour: number): EventBatch {
    const hit = this.#controlCache.get(hour);
    if (hit !== undefined) return hit;
    const batch = this.controlPlaneEvents(hour);
    this.#controlCache.set(hour, batch);
    if (this.#controlCache.size > CONTROL_CACHE_HOURS) {
      const oldest = this.#controlCache.keys().next();
      if (oldest.done !== true) this.#controlCache.delete(oldest.value);
    }
    return batch;
  }

  /** Control-plane and workflow events with ts in hour h (h = epoch ms / 1 h). */
  controlPlaneEvents(hour: number): EventBatch {
    const hourStart = hour * HOUR_MS;
    const historyStart = this.#source.historyStartMs;
    const out: { ts: number; group: FieldGroup }[] = [];
    const rng = new Rng(hash32(this.seed, "control-plane", hour));
    const commands = 1 + rng.below(4);
    for (let i = 0; i < commands; i++) {
      const c = rng.weighted(
        COMMANDS,
        COMMANDS.map((x) => x.weight),
      );
      const actor = this.#actor(rng);
      const group = new FieldGroup({
        "control_plane.command_name": c.commandName,
        "control_plane.command_type": c.commandType,
        "control_plane.policy_action": c.policyAction,
        "control_plane.service": c.service,
        "control_plane.method": c.method,
        "control_plane.user_email": actor?.email,
        "control_plane.user_type": actor?.type,
        "control_plane.user_id": actor?.id,
      });
      out.push({ ts: hourStart + rng.below(HOUR_MS), group });
    }
    const runs = rng.weighted([0, 1, 2], [3, 4, 2]);
    for (let r = 0; r < runs; r++) {
      const wf = rng.pick(this.workflows);
      const by =
        wf.triggerType === "manual" && this.#humans.length > 0
          ? rng.pick(this.#humans)
          : undefined;
      // Steps stay inside the hour: the hour's batch holds the whole run.
      let ts = hourStart + rng.below(HOUR_MS - 600_000);
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
        ts += 200 + rng.below(60_000);
        const group = new FieldGroup({
          ...trigger,
          "step.name": step.name,
          "step.type": step.type,
        });
        out.push({ ts, group });
      }
    }
    const kept = out
      .filter((e) => historyStart === undefined || e.ts >= historyStart)
      .sort((a, b) => a.ts - b.ts);
    const batch = draft(kept.length, undefined);
    kept.forEach((e, i) => {
      batch.ts[i] = e.ts;
      batch.detail[i] = e.group;
    });
    return seal(batch);
  }

  #actor(rng: Rng): SimUser | undefined {
    // Machines are Terraform and CI; among people, a handful of admins do the work.
    if (this.#machines.length > 0 && rng.chance(0.2)) {
      return rng.pick(this.#machines);
    }
    if (this.#admins.length > 0) return rng.pick(this.#admins);
    return undefined;
  }

  #sessionBatch(s: SimSession): EventBatch {
    const profile = this.#profile(s.resourceId);
    const rng = new Rng(hash32(this.seed, "events", s.id));
    const duration = Math.max(0, s.durationMs);
    const n = Math.min(
      MAX_EVENTS_PER_SESSION,
      2 + rng.below(7) + Math.floor(Math.sqrt(duration / 60_000) * 1.5),
    );
    const batch = draft(n, this.#sessionContext(s, profile));
    batch.ts[0] = s.startMs;
    for (let i = 1; i < n; i++) {
      batch.ts[i] = s.startMs + Math.floor(rng.next() * (duration + 1));
    }
    batch.ts.sort();
    const user = this.#users.get(s.userId);
    const startHourUtc = new Date(s.startMs).getUTCHours();
    const kind =
      profile.technology === undefined
        ? "screen"
        : EVENT_KIND_OF[profile.technology];
    const fired: string[] = [];
    for (let i = 0; i < n; i++) {
      fired.length = 0;
      if (i === 0) {
        if (user?.type === "human" && rng.chance(0.3)) {
          fired.push("session-require-mfa");
        }
        if ((startHourUtc < 6 || startHourUtc >= 20) && rng.chance(0.5)) {
          fired.push("session-block-after-hours");
        }
      }
      if (i === n - 1 && duration > 8 * HOUR_MS) {
        fired.push("session-max-duration-8h");
      }
      switch (kind) {
        case "sql":
        case "document":
        case "keyvalue":
        case "request":
        case "command": {
          const t = profile.templates?.pick(rng);
          if (t === undefined) break;
          if (kind === "request" || kind === "command")
            this.#requestEvent(rng, profile, t, kind, fired, batch, i);
          else this.#queryEvent(rng, profile, t, fired, batch, i);
          break;
        }
        case "llm":
        case "mcp":
          batch.detail[i] = this.#llmEvent(rng, profile, kind, fired);
          break;
        case "screen":
          break;
      }
      batch.policy[i] = this.#policyGroup(fired);
    }
    return seal(batch);
  }

  /** A statement of template `t` (picked from the resource's templates). */
  #queryEvent(
    rng: Rng,
    p: ResourceProfile,
    t: Template,
    fired: string[],
    batch: Draft,
    i: number,
  ): void {
    for (const masking of t.masking) {
      if (rng.chance(0.9)) fired.push(masking);
    }
    if (t.sensitive && rng.chance(0.4)) {
      fired.push("notify-sensitive-table-access");
    }
    if (t.kind === "ddl" && p.isProd) fired.push("block-prod-ddl");
    if (t.kind === "bulk" && rng.chance(0.3)) fired.push("block-bulk-export");
    const filtered =
      (t.kind === "read" || t.kind === "bulk") && p.isProd && rng.chance(0.15);
    if (filtered) {
      fired.push(
        rng.chance(0.5) ? "filter-tenant-rows" : "filter-rows-by-region",
      );
    }
    const blocked = fired.some((name) => this.#activeBlocking.has(name));
    batch.detail[i] = variantOf(t, rng.below(TEMPLATE_VARIANTS), blocked);
    // A blocked statement never reached the resource: no rows, no data.
    if (blocked) {
      setNumber(batch, NUMBER_COLUMN.rowsReceived, i, 0);
      setNumber(batch, NUMBER_COLUMN.rowsSent, i, 0);
      return;
    }
    const rows = rowsFor(t.kind, rng);
    // Row filtering drops rows from the response, after the resource sent them.
    const sent = filtered ? Math.floor(rows * (0.1 + 0.8 * rng.next())) : rows;
    setNumber(batch, NUMBER_COLUMN.rowsReceived, i, rows);
    setNumber(batch, NUMBER_COLUMN.rowsSent, i, sent);
    setNumber(batch, NUMBER_COLUMN.dataVolume, i, 96 + sent * t.rowWidth);
  }

  /** A request or command of template `t` (picked from the resource's templates). */
  #requestEvent(
    rng: Rng,
    p: ResourceProfile,
    t: Template,
    kind: "request" | "command",
    fired: string[],
    batch: Draft,
    i: number,
  ): void {
    if (
      kind === "request" &&
      /customers|employees|users/.test(t.source) &&
      rng.chance(0.3)
    ) {
      fired.push("mask-pii-emails");
    }
    if (
      kind === "command" &&
      /secret|shadow/.test(t.source) &&
      rng.chance(0.5)
    ) {
      fired.push("notify-sensitive-table-access");
    }
    batch.detail[i] = variantOf(t, rng.below(TEMPLATE_VARIANTS), false);
    if (kind === "request") {
      setNumber(
        batch,
        NUMBER_COLUMN.dataVolume,
        i,
        t.rowWidth * (1 + rng.below(200)),
      );
    }
  }

  #llmEvent(
    rng: Rng,
    p: ResourceProfile,
    kind: "llm" | "mcp",
    fired: string[],
  ): FieldGroup {
    const model = rng.weighted(
      p.llmModels,
      p.llmModels.map((_, i) => 1 / (i + 1)),
    );
    let tools: string[] = [];
    if (kind === "mcp") tools = rng.sample(MCP_TOOLS, 1 + rng.below(3));
    else if (rng.chance(0.35)) tools = rng.sample(LLM_TOOLS, 1 + rng.below(2));
    if (rng.chance(0.08)) fired.push("notify-llm-pii-prompt");
    if (rng.chance(0.1)) fired.push("mask-llm-pii-responses");
    const secrets = rng.chance(0.02);
    if (secrets) fired.push("block-llm-secrets");
    let stop =
      tools.length > 0
        ? "tool_calls"
        : rng.weighted(["stop", "length"], [95, 5]);
    if (secrets || rng.chance(0.01)) stop = "content_filter";
    const key = `${p.llmProvider}|${model}|${stop}|${tools.join(",")}`;
    return memo(this.#llmGroups, key, () => {
      return new FieldGroup({
        "llm.provider": p.llmProvider,
        "llm.model": model,
        "llm.tool_call_names": tools,
        "llm.tool_call_count": String(tools.length),
        "llm.stop_reason": stop,
      });
    });
  }

  #policyGroup(names: readonly string[]): FieldGroup | undefined {
    if (names.length === 0) return undefined;
    const picked = this.policies.filter((p) => names.includes(p.name));
    return memo(this.#policyGroups, picked.map((p) => p.name).join(","), () => {
      return new FieldGroup({
        "policy.id": picked.map((p) => p.id),
        "policy.name": picked.map((p) => p.name),
        "policy.status": picked.map((p) => p.status),
        "policy.type": picked.map((p) => p.type),
      });
    });
  }

  /** The session's own fields, extending its resource, its user and its end user. */
  #sessionContext(s: SimSession, p: ResourceProfile): FieldGroup {
    const parents = [p.group];
    const user = this.#users.get(s.userId);
    if (user !== undefined) {
      // Only people run the desktop app, and not for every session.
      const desktop =
        user.type === "human" && hash32(this.seed, "desktop", s.id) % 100 < 65;
      parents.push(this.#userGroup(user, desktop));
    }
    const endUser =
      s.endUserId === "" ? undefined : this.#users.get(s.endUserId);
    if (endUser !== undefined) {
      parents.push(
        memo(this.#endUserGroups, endUser.id, () => {
          return new FieldGroup({
            "end_user.type": endUser.type,
            "end_user.name": endUser.name,
            "end_user.email": endUser.email,
            "end_user.groups": this.#groupsOf(endUser),
          });
        }),
      );
    }
    return new FieldGroup(
      {
        "session.id": s.id,
        "session.application_name": s.applicationName,
        "session.client_ip_address": s.clientIpAddress,
      },
      parents,
    );
  }

  #userGroup(user: SimUser, desktop: boolean): FieldGroup {
    const device = desktop ? desktopDeviceOf(this.seed, user) : undefined;
    return memo(
      this.#userGroups,
      `${user.id}|${device === undefined ? 0 : 1}`,
      () => {
        return new FieldGroup({
          "user.type": user.type,
          "user.sub_type": userSubTypeOf(this.seed, user),
          "user.email": user.email,
          "user.username": user.username,
          "user.id": user.id,
          "user.groups": this.#groupsOf(user),
          "device.system_version": device?.systemVersion,
          "device.kernel_version": device?.kernelVersion,
          "device.computer_name": device?.computerName,
          "device.user_name": device?.userName,
          "device.model_name": device?.modelName,
          "device.model_identifier": device?.modelIdentifier,
          "device.model_number": device?.modelNumber,
          "device.serial_number": device?.serialNumber,
        });
      },
    );
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
    const templates =
      tech === undefined ? [] : this.#templatesFor(tech, resource, rng);
    const providers = Object.keys(LLM_PROVIDERS);
    const llmProvider = rng.pick(providers);
    return {
      resource,
      technology: tech,
      group: new FieldGroup(base),
      isProd: /prod/i.test(resource?.environment ?? ""),
      templates:
        templates.length === 0
          ? undefined
          : new WeightedTable(
              templates,
              templates.map((t) => t.weight),
            ),
      llmProvider,
      llmModels: rng.sample(LLM_PROVIDERS[llmProvider] ?? [], 3),
    };
  }

  #templatesFor(
    tech: Technology,
    resource: SimResource | undefined,
    rng: Rng,
  ): Template[] {
    const kind = EVENT_KIND_OF[tech];
    const resourceKey = resource?.id ?? "";
    const specs: TemplateSpec[] = [];
    if (kind === "sql" || kind === "document") {
      const db = (resource?.name ?? "db").replace(/-/g, "_");
      const schema = SCHEMA_OF[tech] ?? db;
      for (const table of rng.sample(TABLES, 3 + rng.below(2))) {
        specs.push(
          ...tableTemplates(tech, table, `${db}.${schema}.${table.name}`, rng),
        );
      }
    } else if (kind === "keyvalue") {
      specs.push(
        ...KEYVALUE_TEMPLATES.map((source) => ({
          source,
          kind: "command" as const,
          columns: [],
        })),
      );
    } else {
      const list =
        (kind === "request" ? REQUEST_TEMPLATES : COMMAND_TEMPLATES)[tech] ??
        [];
      specs.push(
        ...list.map((source) => ({
          source,
          kind: "command" as const,
          columns: [],
        })),
      );
    }
    return specs.map((spec, i) => {
      const normalized = normalize(spec.source);
      const fingerprint = hexOf(16, "fingerprint", normalized);
      const common: Fields = {
        "query.normalized": normalized,
        "query.fingerprint": fingerprint,
      };
      return {
        source: spec.source,
        kind: spec.kind,
        masking: [...new Set(spec.columns.map((c) => c.label))].flatMap(
          (label) => MASKING_POLICY_OF_LABEL[label] ?? [],
        ),
        sensitive: spec.columns.some((c) => SENSITIVE_LABELS.has(c.label)),
        group: new FieldGroup({
          ...common,
          "response.returned_columns.name": spec.columns.map((c) => c.name),
          "response.returned_columns.path": spec.columns.map((c) => c.path),
          "response.returned_columns.data_label": spec.columns.map(
            (c) => c.label,
          ),
        }),
        blockedGroup: new FieldGroup(common),
        weight: spec.weight ?? 1 + rng.below(5),
        variants: [],
        blockedVariants: [],
        variantSeed: hash32(this.seed, "variants", resourceKey, i),
        rowWidth: 16 + spec.columns.length * (8 + rng.below(40)),
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

function tableTemplates(
  tech: Technology,
  table: SimTable,
  prefix: string,
  rng: Rng,
): TemplateSpec[] {
  const ret = (names: readonly string[]): ReturnedColumn[] =>
    table.columns
      .filter((c) => names.includes(c.name))
      .map((c) => ({
        name: c.name,
        path: `${prefix}.${c.name}`,
        label: c.label,
      }));
  const all = ret(table.columns.map((c) => c.name));
  const t = table.name;
  const [c1, c2] = rng.sample(table.columns.slice(1), 2);
  const where = rng.pick(table.columns.slice(1));
  const lit = (c: { literal: string }): string =>
    c.literal === "id" || c.literal === "amount" || c.literal === "n"
      ? `{${c.literal}}`
      : `'{${c.literal}}'`;
  const picked = [c1, c2].filter((c) => c !== undefined);
  const names = picked.map((c) => c.name);
  const count: ReturnedColumn[] = [{ name: "count", path: "", label: "none" }];
  switch (EVENT_KIND_OF[tech]) {
    case "document":
      if (tech === "dynamodb") {
        return [
          {
            source: `GetItem ${t} id={id}`,
            kind: "point",
            columns: all,
            weight: 6,
          },
          {
            source: `Query ${t} ${where.name}=${lit(where)}`,
            kind: "read",
            columns: all,
            weight: 4,
          },
          { source: `Scan ${t}`, kind: "bulk", columns: all, weight: 1 },
          { source: `PutItem ${t}`, kind: "write", columns: [], weight: 2 },
          {
            source: `DeleteItem ${t} id={id}`,
            kind: "write",
            columns: [],
            weight: 1,
          },
        ];
      }
      if (tech === "elastic") {
        return [
          {
            source: `GET /${t}/_doc/{id}`,
            kind: "point",
            columns: all,
            weight: 5,
          },
          {
            source: `GET /${t}/_search?q=${where.name}:{${where.literal}}`,
            kind: "read",
            columns: all,
            weight: 5,
          },
          {
            source: `GET /${t}/_count`,
            kind: "count",
            columns: count,
            weight: 2,
          },
          { source: `POST /${t}/_doc`, kind: "write", columns: [], weight: 2 },
        ];
      }
      return [
        {
          source: `db.${t}.find({"_id": {id}})`,
          kind: "point",
          columns: all,
          weight: 5,
        },
        {
          source: `db.${t}.find({"${where.name}": ${lit(where)}}, {${names.map((n) => `"${n}": 1`).join(", ")}})`,
          kind: "read",
          columns: ret(names),
          weight: 5,
        },
        {
          source: `db.${t}.countDocuments({})`,
          kind: "count",
          columns: count,
          weight: 2,
        },
        {
          source: `db.${t}.insertOne({...})`,
          kind: "write",
          columns: [],
          weight: 2,
        },
        {
          source: `db.${t}.deleteOne({"_id": {id}})`,
          kind: "write",
          columns: [],
          weight: 1,
        },
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
        {
          source: `SELECT * FROM ${t} WHERE id = {id}`,
          kind: "point",
          columns: all,
          weight: 6,
        },
        {
          source: `SELECT ${names.join(", ")} FROM ${t} WHERE ${where.name} = ${lit(where)}`,
          kind: "read",
          columns: ret(names),
          weight: 8,
        },
        {
          source: `SELECT COUNT(*) FROM ${t}`,
          kind: "count",
          columns: count,
          weight: 2,
        },
        {
          source: `SELECT * FROM ${t} LIMIT {n}`,
          kind: "bulk",
          columns: all,
          weight: 1,
        },
        {
          source: `UPDATE ${t} SET ${set.name} = ${lit(set)} WHERE id = {id}`,
          kind: "write",
          columns: [],
          weight: 2,
        },
        {
          source: `INSERT INTO ${t} (${names.join(", ")}) VALUES (${picked.map(lit).join(", ")})`,
          kind: "write",
          columns: [],
          weight: 1,
        },
        {
          source: `DELETE FROM ${t} WHERE id = {id}`,
          kind: "write",
          columns: [],
          weight: 0.5,
        },
        { source: ddl, kind: "ddl", columns: [], weight: 0.2 },
      ];
    }
  }
}

const PLACEHOLDER = /'\{(\w+)\}'|\{(\w+)\}/g;

function normalize(source: string): string {
  return source.replace(PLACEHOLDER, "?");
}

/**
 * One literal variant of a template: its received (and, unless blocked, sent) text, rendered
 * once and shared by every event that draws it.
 */
function variantOf(t: Template, i: number, blocked: boolean): FieldGroup {
  const list = blocked ? t.blockedVariants : t.variants;
  const cached = list[i];
  if (cached !== undefined) return cached;
  const rng = new Rng(hash32(t.variantSeed, i));
  const text = t.source.replace(
    PLACEHOLDER,
    (_m: string, quoted?: string, bare?: string) =>
      quoted !== undefined
        ? `'${literalFor(quoted, rng)}'`
        : literalFor(bare ?? "", rng),
  );
  // Policies rewrite responses, not statements, so what was sent is what was received.
  const g = new FieldGroup(
    { "query.received": text, "query.sent": blocked ? undefined : text },
    [blocked ? t.blockedGroup : t.group],
  );
  list[i] = g;
  return g;
}

function memo<K, V>(cache: Map<K, V>, key: K, make: () => V): V {
  let v = cache.get(key);
  if (v === undefined) {
    v = make();
    cache.set(key, v);
  }
  return v;
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

/** A batch under construction; `seal` finishes it. */
interface Draft {
  readonly ts: Float64Array;
  readonly ctx: FieldGroup | undefined;
  readonly detail: (FieldGroup | undefined)[];
  readonly policy: (FieldGroup | undefined)[];
  /** As EventBatch.numbers, always 3 × n long here. */
  readonly numbers: Float64Array;
  hasNumbers: boolean;
}

function draft(n: number, ctx: FieldGroup | undefined): Draft {
  return {
    ts: new Float64Array(n),
    ctx,
    detail: new Array<FieldGroup | undefined>(n).fill(undefined),
    policy: new Array<FieldGroup | undefined>(n).fill(undefined),
    numbers: new Float64Array(3 * n).fill(-1),
    hasNumbers: false,
  };
}

function setNumber(d: Draft, column: number, i: number, value: number): void {
  d.numbers[column * d.ts.length + i] = value;
  d.hasNumbers = true;
}

const NO_GROUPS: readonly (FieldGroup | undefined)[] = Object.freeze([]);
const NO_NUMBERS = new Float64Array(0);

/** Columns without any value share one empty array: most sessions have no policies or rows. */
function seal(d: Draft): EventBatch {
  const groups = (
    list: (FieldGroup | undefined)[],
  ): readonly (FieldGroup | undefined)[] =>
    list.some((g) => g !== undefined) ? list : NO_GROUPS;
  return {
    ts: d.ts,
    ctx: d.ctx,
    detail: groups(d.detail),
    policy: groups(d.policy),
    numbers: d.hasNumbers ? d.numbers : NO_NUMBERS,
  };
}

function visitRange(
  b: EventBatch,
  startMs: number,
  endMs: number,
  visit: BatchVisitor,
): void {
  const from = lowerBound(b.ts, startMs);
  const to = lowerBound(b.ts, endMs);
  if (to > from) visit(b, from, to);
}

/** First index whose time is at or after ms (times ascending). */
function lowerBound(ts: Float64Array, ms: number): number {
  let lo = 0;
  let hi = ts.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((ts[mid] ?? Infinity) < ms) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
