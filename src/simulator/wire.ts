// proto3 JSON of a Session, as the real service writes it: zero values omitted (empty
// strings, empty arrays, an open session's endTime and duration, a missing parent, endUser,
// email, connector or sidecar), timestamps with 0/3/6/9 fractional digits, Durations as
// "<seconds>[.fraction]s". The user member the operation list calls `service` carries the vendor's
// brand name on the wire; it is configurable so the exporter's read-by-shape is exercised.

import type { SessionStatus, SimSession, SimUser } from "./model.js";
import {
  statusAt,
  throughNativeUser,
  type SessionGenerator,
} from "./sessions.js";
import { ByteSink } from "./bytes.js";
import {
  formatDuration,
  formatTimestamp,
  writeDuration,
  writeTimestamp,
} from "./time.js";

export const DEFAULT_BRAND_MEMBER = "formal";

interface WireIdentity {
  id: string;
  name?: string;
  email?: string;
  type?: string;
  groups?: string[];
  externalIds?: string[];
}

/** `{user, endUser?}` under the brand member of the session user. */
interface WireBrandIdentities {
  user: WireIdentity;
  endUser?: WireIdentity;
}

interface WireSessionUser {
  type?: string;
  username?: string;
  native?: { username: string };
  /** The brand member (default "formal") holds WireBrandIdentities. */
  [brandMember: string]: unknown;
}

export interface WireSession {
  id: string;
  startTime: string;
  endTime?: string;
  duration?: string;
  sessionStatus: SessionStatus;
  network?: { clientIpAddress?: string; serverIpAddress?: string };
  sidecar?: { id?: string; name?: string; technology?: string };
  user: WireSessionUser;
  resource?: { type?: string; id?: string; name?: string; technology?: string };
  connector?: { id?: string; name?: string };
  parentSessionId?: string;
}

/** Pre-encoded JSON pieces of everything a session takes from its resource. */
interface ResourceFragments {
  /** The network object after its clientIpAddress member, closing brace included. */
  networkRest: Buffer;
  /** The network member of a session without client address (undefined: omit it). */
  networkAlone: Buffer | undefined;
  sidecar: Buffer;
  /** resource and connector members. */
  resource: Buffer;
}

const STATUS_MEMBER: Readonly<Record<SessionStatus, string>> = {
  active: '","sessionStatus":"active"',
  idle: '","sessionStatus":"idle"',
  completed: '","sessionStatus":"completed"',
};

const JSON_SAFE = /^[\w.:@|+/-]*$/;

/** JSON string literal; skips JSON.stringify for the plain ids and addresses we generate. */
function writeQuoted(sink: ByteSink, text: string): void {
  if (JSON_SAFE.test(text)) {
    sink.byte(34);
    sink.ascii(text);
    sink.byte(34);
  } else {
    sink.utf8(JSON.stringify(text));
  }
}

/** Copies only non-zero members, in the given order (proto3 omits zero values). */
function compact<T extends object>(members: {
  [K in keyof T]: T[K] | "" | undefined;
}): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(members)) {
    if (value === undefined || value === "") continue;
    if (Array.isArray(value) && value.length === 0) continue;
    out[key] = value;
  }
  return out as T;
}

/**
 * Encodes sessions of one generator under one brand member. The JSON path concatenates
 * fragments cached per org entity (users, resources), so a 100000-session page costs string
 * concatenation, not 100000 JSON.stringify calls over object graphs.
 */
export class WireEncoder {
  private readonly userFragments = new Map<
    string,
    Map<string, Map<string, Buffer>>
  >();
  private readonly resourceFragments = new Map<string, ResourceFragments>();

  constructor(
    readonly generator: SessionGenerator,
    readonly brandMember: string = DEFAULT_BRAND_MEMBER,
  ) {
    if (
      brandMember === "" ||
      ["type", "username", "native"].includes(brandMember)
    ) {
      throw new RangeError(
        `brand member "${brandMember}" would collide with a user member`,
      );
    }
  }

  /** The wire object; fresh objects every call, safe to mutate. Throws if not started. */
  object(s: SimSession, nowMs: number): WireSession {
    const status = this.status(s, nowMs);
    const nanos = s.startSubMsNanos ?? 0;
    // Members in the order the JSON path writes them, so both serialize identically.
    const out: Record<string, unknown> = {
      id: s.id,
      startTime: formatTimestamp(s.startMs, nanos),
    };
    if (status === "completed") {
      out.endTime = formatTimestamp(s.startMs + s.durationMs, nanos);
      out.duration = formatDuration(s.durationMs);
    }
    out.sessionStatus = status;
    Object.assign(out, this.tailObject(s));
    return out as unknown as WireSession;
  }

  /** The JSON text of `object(s, nowMs)`, byte for byte. */
  json(s: SimSession, nowMs: number): string {
    const sink = new ByteSink(1024);
    this.write(sink, s, nowMs);
    return sink.toString();
  }

  /** Writes the JSON of `object(s, nowMs)` into `sink` (the page path: no strings built). */
  write(sink: ByteSink, s: SimSession, nowMs: number): void {
    const status = this.status(s, nowMs);
    const nanos = s.startSubMsNanos ?? 0;
    const res = this.resourceFragment(s.resourceId);
    sink.ascii('{"id":');
    writeQuoted(sink, s.id);
    sink.ascii(',"startTime":"');
    writeTimestamp(sink, s.startMs, nanos);
    if (status === "completed") {
      sink.ascii('","endTime":"');
      writeTimestamp(sink, s.startMs + s.durationMs, nanos);
      sink.ascii('","duration":"');
      writeDuration(sink, s.durationMs);
    }
    sink.ascii(STATUS_MEMBER[status]);
    if (s.clientIpAddress !== "") {
      sink.ascii(',"network":{"clientIpAddress":');
      writeQuoted(sink, s.clientIpAddress);
      sink.bytes(res.networkRest);
    } else if (res.networkAlone) {
      sink.bytes(res.networkAlone);
    }
    sink.bytes(res.sidecar);
    sink.bytes(this.userFragment(s));
    sink.bytes(res.resource);
    if (s.parentSessionId !== "") {
      sink.ascii(',"parentSessionId":');
      writeQuoted(sink, s.parentSessionId);
    }
    sink.byte(125); // "}"
  }

  private status(s: SimSession, nowMs: number): SessionStatus {
    const status = statusAt(s, nowMs);
    if (status === undefined) {
      throw new RangeError(
        `session ${s.id} has not started at ${new Date(nowMs).toISOString()}`,
      );
    }
    return status;
  }

  private tailObject(s: SimSession): Partial<WireSession> {
    const out: Partial<WireSession> = {};
    const network = this.networkObject(s);
    if (network) out.network = network;
    const sidecar = this.sidecarObject(s.resourceId);
    if (sidecar) out.sidecar = sidecar;
    out.user = this.userObject(s);
    const resource = this.resourceObject(s.resourceId);
    if (resource) out.resource = resource;
    const connector = this.connectorObject(s.resourceId);
    if (connector) out.connector = connector;
    if (s.parentSessionId !== "") out.parentSessionId = s.parentSessionId;
    return out;
  }

  private networkObject(s: SimSession): WireSession["network"] {
    const server =
      this.generator.index.resourceById.get(s.resourceId)?.serverIpAddress ??
      "";
    if (s.clientIpAddress === "" && server === "") return undefined;
    return compact<NonNullable<WireSession["network"]>>({
      clientIpAddress: s.clientIpAddress,
      serverIpAddress: server,
    });
  }

  private sidecarObject(resourceId: string): WireSession["sidecar"] {
    const { index, org } = this.generator;
    const id = org.sidecarOfResource.get(resourceId);
    const sc = id === undefined ? undefined : index.sidecarById.get(id);
    if (!sc) return undefined;
    return compact({ id: sc.id, name: sc.name, technology: sc.technology });
  }

  private connectorObject(resourceId: string): WireSession["connector"] {
    const { index, org } = this.generator;
    const id = org.connectorOfResource.get(resourceId);
    const c = id === undefined ? undefined : index.connectorById.get(id);
    if (!c) return undefined;
    return compact({ id: c.id, name: c.name });
  }

  private resourceObject(resourceId: string): WireSession["resource"] {
    const r = this.generator.index.resourceById.get(resourceId);
    if (!r) return resourceId === "" ? undefined : { id: resourceId };
    return compact({
      type: r.type,
      id: r.id,
      name: r.name,
      technology: r.technology,
    });
  }

  private identity(u: SimUser | undefined, id: string): WireIdentity {
    if (!u) return { id };
    return compact<WireIdentity>({
      id: u.id,
      name: u.name,
      email: u.email,
      type: u.type,
      groups: [...(this.generator.index.groupNamesOfUser.get(u.id) ?? [])],
      externalIds: [...u.externalIds],
    });
  }

  private userObject(s: SimSession): WireSessionUser {
    if (throughNativeUser(this.generator.seed, s)) {
      return {
        type: "native",
        username: s.nativeUsername,
        native: { username: s.nativeUsername },
      };
    }
    const { userById } = this.generator.index;
    const user = userById.get(s.userId);
    const identities: WireBrandIdentities = {
      user: this.identity(user, s.userId),
    };
    if (s.endUserId !== "")
      identities.endUser = this.identity(
        userById.get(s.endUserId),
        s.endUserId,
      );
    const out: WireSessionUser = compact<WireSessionUser>({
      type: user?.type,
      username: user?.username,
    });
    out[this.brandMember] = identities;
    if (s.nativeUsername !== "") out.native = { username: s.nativeUsername };
    return out;
  }

  private userFragment(s: SimSession): Buffer {
    // Nested maps keyed by the ids themselves: a composite key would be a fresh string to
    // hash on every call.
    // Sessions made through a native user share the key "" (no user of the service's own).
    const userKey = throughNativeUser(this.generator.seed, s) ? "" : s.userId;
    let byEndUser = this.userFragments.get(userKey);
    if (!byEndUser) {
      byEndUser = new Map();
      this.userFragments.set(userKey, byEndUser);
    }
    let byNative = byEndUser.get(s.endUserId);
    if (!byNative) {
      byNative = new Map();
      byEndUser.set(s.endUserId, byNative);
    }
    let frag = byNative.get(s.nativeUsername);
    if (frag === undefined) {
      frag = Buffer.from(',"user":' + JSON.stringify(this.userObject(s)));
      byNative.set(s.nativeUsername, frag);
    }
    return frag;
  }

  private resourceFragment(resourceId: string): ResourceFragments {
    let frag = this.resourceFragments.get(resourceId);
    if (frag === undefined) {
      const server =
        this.generator.index.resourceById.get(resourceId)?.serverIpAddress ??
        "";
      const sidecar = this.sidecarObject(resourceId);
      const resource = this.resourceObject(resourceId);
      const connector = this.connectorObject(resourceId);
      const serverMember =
        server === "" ? "" : '"serverIpAddress":' + JSON.stringify(server);
      frag = {
        networkRest: Buffer.from(
          (serverMember === "" ? "" : "," + serverMember) + "}",
        ),
        networkAlone:
          serverMember === ""
            ? undefined
            : Buffer.from(`,"network":{${serverMember}}`),
        sidecar: Buffer.from(
          sidecar ? `,"sidecar":${JSON.stringify(sidecar)}` : "",
        ),
        resource: Buffer.from(
          (resource ? `,"resource":${JSON.stringify(resource)}` : "") +
            (connector ? `,"connector":${JSON.stringify(connector)}` : ""),
        ),
      };
      this.resourceFragments.set(resourceId, frag);
    }
    return frag;
  }
}

const encoders = new WeakMap<SessionGenerator, Map<string, WireEncoder>>();

/** The shared encoder of (generator, brand member). */
export function wireEncoder(
  gen: SessionGenerator,
  brandMember = DEFAULT_BRAND_MEMBER,
): WireEncoder {
  let byBrand = encoders.get(gen);
  if (!byBrand) {
    byBrand = new Map();
    encoders.set(gen, byBrand);
  }
  let enc = byBrand.get(brandMember);
  if (!enc) {
    enc = new WireEncoder(gen, brandMember);
    byBrand.set(brandMember, enc);
  }
  return enc;
}

/** proto3 JSON object of a session at `nowMs` (throws if it has not started by then). */
export function sessionToWire(
  s: SimSession,
  gen: SessionGenerator,
  nowMs: number,
  brandMember = DEFAULT_BRAND_MEMBER,
): WireSession {
  return wireEncoder(gen, brandMember).object(s, nowMs);
}
