// A native user's credentials reduced to what may be stored: the kind of each credential
// variant and its non-secret fields. Everything else is dropped before a record is kept, logged
// or dead-lettered, so that no password, API key value, token, private key or `secret` ever
// lands (docs/entity-streams.md, "Secrets never land"). An allowlist, not a denylist: a member
// the service adds later is dropped until it is known to be harmless.

/** Members of a NativeUser kept as they are. */
const NATIVE_USER_MEMBERS = new Set([
  "id",
  "resourceId",
  "username",
  "useAsDefault",
  "terminationProtection",
  "createdAt",
  "updatedAt",
]);

/** Credential variants and the fields of each that hold no secret. */
const NON_SECRET_FIELDS: Readonly<Record<string, readonly string[]>> = {
  basic: ["username", "usernameIsEnv", "passwordIsEnv"],
  httpApiKey: ["location", "key"],
  httpBasic: ["header", "username"],
  httpBearer: ["header"],
  iam: ["type", "role", "username"],
  kubernetes: ["kubeconfigEnv"],
  snowflakeKey: ["username"],
  sshKey: ["username"],
};

/** The fields dropped, for the docs and messages: `secret` and these per variant. */
export const DROPPED_SECRET_FIELDS: readonly string[] = [
  "secret",
  "basic.password",
  "httpApiKey.value",
  "httpBasic.password",
  "httpBearer.token",
  "snowflakeKey.key",
  "sshKey.key",
];

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * A NativeUser message without secrets: its plain members, and each credential variant with
 * only its non-secret fields (a variant not known here keeps its name and nothing else). Any
 * value that is not an object becomes `{}`.
 */
export function redactNativeUser(value: unknown): Record<string, unknown> {
  if (!isObject(value)) return {};
  const out: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) {
    if (NATIVE_USER_MEMBERS.has(key)) {
      if (typeof member !== "object" || member === null) out[key] = member;
      continue;
    }
    if (key === "secret" || !isObject(member)) continue;
    const keep = NON_SECRET_FIELDS[key] ?? [];
    const variant: Record<string, unknown> = {};
    for (const field of keep) {
      const v = member[field];
      if (v !== undefined && (typeof v !== "object" || v === null))
        variant[field] = v;
    }
    out[key] = variant;
  }
  return out;
}

/** A NativeUserIdentityLink whose `nativeUser` member has lost its secrets (redactNativeUser). */
export function redactIdentityLink(value: unknown): unknown {
  if (!isObject(value) || value.nativeUser === undefined) return value;
  return { ...value, nativeUser: redactNativeUser(value.nativeUser) };
}

/** The credential variants a (redacted) native user carries, by name, in a stable order. */
export function credentialKinds(nativeUser: Record<string, unknown>): string[] {
  return Object.keys(nativeUser)
    .filter((k) => !NATIVE_USER_MEMBERS.has(k) && isObject(nativeUser[k]))
    .sort();
}
