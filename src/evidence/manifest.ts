// The manifest of an evidence directory (a report, a month's archive): every file with its
// SHA-256 and size, whatever the producer adds, and optionally an Ed25519 signature over the
// manifest's canonical JSON. `verifyEvidence` re-checks all of it offline, from the directory
// alone (and a public key the verifier trusts).
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  sign,
  verify,
  type KeyObject,
} from "node:crypto";
import {
  closeSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  readSync,
} from "node:fs";
import { join, relative, sep } from "node:path";
import { FatalError, UsageError, errorMessage } from "../util/errors.js";
import { writePrivateFile, type Sharing } from "../util/private-files.js";

export const MANIFEST_FILE = "manifest.json";

export interface ManifestFile {
  /** Path inside the directory, with `/` separators. */
  path: string;
  sha256: string;
  bytes: number;
}

export interface ManifestSignature {
  algorithm: "ed25519";
  /** SHA-256 of the public key's DER (SPKI) encoding, hex. */
  publicKeyFingerprint: string;
  /** The public key as PEM (SPKI), so a verifier can compare it with the one they trust. */
  publicKey: string;
  /** Base64 signature over the canonical JSON of the manifest without `signature`. */
  value: string;
}

export interface Manifest {
  files: ManifestFile[];
  signature?: ManifestSignature;
  [member: string]: unknown;
}

/** JSON with object keys sorted at every level: the same value always gives the same bytes. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
}

function sha256Hex(data: Buffer | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/** How much of a file is read at a time to hash it: the file is never held whole. */
const HASH_CHUNK_BYTES = 1 << 20;

/** A file's SHA-256 and size, read a chunk at a time (an archive's file may be gigabytes). */
function hashFile(path: string): { sha256: string; bytes: number } {
  const hash = createHash("sha256");
  const chunk = Buffer.allocUnsafe(HASH_CHUNK_BYTES);
  const fd = openSync(path, "r");
  let bytes = 0;
  try {
    for (;;) {
      const n = readSync(fd, chunk, 0, HASH_CHUNK_BYTES, null);
      if (n === 0) break;
      hash.update(chunk.subarray(0, n));
      bytes += n;
    }
  } finally {
    closeSync(fd);
  }
  return { sha256: hash.digest("hex"), bytes };
}

/** Every file under `dir` but the manifest itself, sorted by path. Links are not followed. */
function hashFiles(dir: string): ManifestFile[] {
  return walkFiles(dir).files;
}

/**
 * The regular files under `dir` (the manifest excepted) and the symbolic links, which are
 * neither followed nor hashed: what a link points to is not part of the directory.
 */
function walkFiles(dir: string): {
  files: ManifestFile[];
  links: Array<{ path: string; target: string }>;
} {
  const files: ManifestFile[] = [];
  const links: Array<{ path: string; target: string }> = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const full = join(d, name);
      const stat = lstatSync(full);
      const path = relative(dir, full).split(sep).join("/");
      if (stat.isSymbolicLink()) {
        links.push({ path, target: readlinkSync(full) });
        continue;
      }
      if (stat.isDirectory()) {
        walk(full);
        continue;
      }
      if (path === MANIFEST_FILE) continue;
      files.push({ path, ...hashFile(full) });
    }
  };
  walk(dir);
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { files, links };
}

function publicKeyFingerprint(key: KeyObject): string {
  return sha256Hex(key.export({ type: "spki", format: "der" }));
}

/** The two key files read: how each is parsed, what it is called and how to make one. */
const KEY_FILES = {
  signing: {
    name: "the signing key",
    parse: createPrivateKey,
    give: "give an Ed25519 private key in PEM, e.g. made with `openssl genpkey -algorithm ed25519 -out signing.pem`",
    make: "make one with `openssl genpkey -algorithm ed25519 -out signing.pem`",
  },
  public: {
    name: "the public key",
    parse: createPublicKey,
    give: "give the Ed25519 public key in PEM, e.g. made with `openssl pkey -in signing.pem -pubout -out signing.pub`",
    make: "give the Ed25519 public key in PEM, e.g. made with `openssl pkey -in signing.pem -pubout -out signing.pub`",
  },
} as const;

/** An Ed25519 key from a PEM file; a usage error saying what to give when it is not one. */
function readKey(file: string, kind: keyof typeof KEY_FILES): KeyObject {
  const k = KEY_FILES[kind];
  let key: KeyObject;
  try {
    key = k.parse(readFileSync(file));
  } catch (err) {
    throw new UsageError(
      `cannot read ${k.name} ${file}: ${errorMessage(err)}`,
      {
        hint: k.give,
      },
    );
  }
  if (key.asymmetricKeyType !== "ed25519")
    throw new UsageError(
      `${k.name} ${file} is ${key.asymmetricKeyType ?? "not an asymmetric key"}, not Ed25519`,
      { hint: k.make },
    );
  return key;
}

const readPrivateKey = (file: string): KeyObject => readKey(file, "signing");

export function readPublicKey(file: string): KeyObject {
  return readKey(file, "public");
}

/** A public key a verifier trusts, and where it came from (for messages). */
export interface TrustedKey {
  key: KeyObject;
  source: string;
}

/**
 * The public key to check signatures by: a key file given (`--public-key`, or
 * `evidence.publicKeyFile`), else the public half of the signing key this installation signs
 * with (`evidence.signingKeyFile`); undefined when there is none.
 */
export function trustedPublicKey(options: {
  publicKeyFile?: string | undefined;
  signingKeyFile?: string | undefined;
}): TrustedKey | undefined {
  if (options.publicKeyFile !== undefined)
    return {
      key: readPublicKey(options.publicKeyFile),
      source: options.publicKeyFile,
    };
  if (options.signingKeyFile !== undefined)
    return {
      key: createPublicKey(readPrivateKey(options.signingKeyFile)),
      source: `the public half of ${options.signingKeyFile}`,
    };
  return undefined;
}

function unsigned(manifest: Manifest): Omit<Manifest, "signature"> {
  const rest = { ...manifest };
  delete rest.signature;
  return rest;
}

/**
 * Hashes every file of `dir`, adds `fields`, signs when a key file is given, and writes
 * manifest.json (pretty, keys sorted; 0600, or 0640 with `groupReadable`). Returns the manifest
 * and the SHA-256 of its bytes.
 */
export function writeManifest(
  dir: string,
  fields: Record<string, unknown>,
  options: { signingKeyFile?: string | undefined } & Sharing = {},
): { manifest: Manifest; sha256: string } {
  const manifest: Manifest = { ...fields, files: hashFiles(dir) };
  if (options.signingKeyFile !== undefined) {
    const privateKey = readPrivateKey(options.signingKeyFile);
    const publicKey = createPublicKey(privateKey);
    manifest.signature = {
      algorithm: "ed25519",
      publicKeyFingerprint: publicKeyFingerprint(publicKey),
      publicKey: publicKey.export({ type: "spki", format: "pem" }).toString(),
      value: sign(
        null,
        Buffer.from(canonicalJson(unsigned(manifest))),
        privateKey,
      ).toString("base64"),
    };
  }
  const text = `${JSON.stringify(sortKeys(manifest), null, 2)}\n`;
  writePrivateFile(join(dir, MANIFEST_FILE), text, options);
  return { manifest, sha256: sha256Hex(text) };
}

export function readManifest(dir: string): {
  manifest: Manifest;
  sha256: string;
} {
  const file = join(dir, MANIFEST_FILE);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new FatalError(
      "EVIDENCE_INVALID",
      `no readable ${MANIFEST_FILE} in ${dir}: ${errorMessage(err)}`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new FatalError(
      "EVIDENCE_INVALID",
      `${file} is not JSON: ${errorMessage(err)}`,
    );
  }
  if (
    parsed === null ||
    typeof parsed !== "object" ||
    !Array.isArray((parsed as { files?: unknown }).files)
  ) {
    throw new FatalError(
      "EVIDENCE_INVALID",
      `${file} has no "files" list: not a manifest`,
    );
  }
  return { manifest: parsed as Manifest, sha256: sha256Hex(text) };
}

/**
 * What a signature check established: `verified` by a key the verifier trusts; `unchecked`
 * (signed, but no trusted key was given: a signature anyone can make proves nothing by itself);
 * `invalid` (see the signature problems); `unsigned`. `fingerprint` is the signing key's as the
 * manifest states it.
 */
export type SignatureState =
  | { state: "verified"; fingerprint: string }
  | { state: "invalid"; fingerprint: string }
  | { state: "unchecked"; fingerprint: string }
  | { state: "unsigned" };

export interface EvidenceCheck {
  manifest: Manifest;
  /** SHA-256 of manifest.json's bytes. */
  manifestSha256: string;
  /** Everything wrong, one line each; empty when the directory is as signed. */
  problems: string[];
  /** The problems of the files: changed, missing, added. */
  fileProblems: string[];
  /** Symbolic links in the directory (the manifest among them): never part of the evidence. */
  linkProblems: string[];
  /** The problems of the signature. */
  signatureProblems: string[];
  signed: boolean;
  signature: SignatureState;
}

/**
 * Re-hashes every listed file, finds files added since and symbolic links, and checks the
 * signature: with a trusted key (`publicKey`, or `publicKeyFile`), the manifest must be signed
 * by that key; without, a signature present must be valid for the key it names, and is only
 * `unchecked`.
 */
export function verifyEvidence(
  dir: string,
  options: {
    publicKeyFile?: string | undefined;
    publicKey?: KeyObject | undefined;
  } = {},
): EvidenceCheck {
  const { manifest, sha256 } = readManifest(dir);
  const { fileProblems, linkProblems } = checkFiles(dir, manifest);
  const trusted =
    options.publicKey ??
    (options.publicKeyFile === undefined
      ? undefined
      : readPublicKey(options.publicKeyFile));
  const { signatureProblems, signature } = checkSignature(manifest, trusted);
  return {
    manifest,
    manifestSha256: sha256,
    problems: [...linkProblems, ...fileProblems, ...signatureProblems],
    fileProblems,
    linkProblems,
    signatureProblems,
    signed: manifest.signature !== undefined,
    signature,
  };
}

/** The listed files re-hashed, the files added since, and the symbolic links (the manifest's too). */
function checkFiles(
  dir: string,
  manifest: Manifest,
): { fileProblems: string[]; linkProblems: string[] } {
  const fileProblems: string[] = [];
  const linkProblems: string[] = [];
  if (
    lstatSync(join(dir, MANIFEST_FILE), {
      throwIfNoEntry: false,
    })?.isSymbolicLink()
  )
    linkProblems.push(
      `${MANIFEST_FILE}: a symbolic link, not a file of the directory`,
    );
  const listed = new Map(manifest.files.map((f) => [f.path, f]));
  const walked = walkFiles(dir);
  const present = new Map(walked.files.map((f) => [f.path, f]));
  for (const [path, f] of listed) {
    const now = present.get(path);
    if (now === undefined) fileProblems.push(`${path}: listed but missing`);
    else if (now.sha256 !== f.sha256)
      fileProblems.push(
        `${path}: SHA-256 is ${now.sha256}, the manifest says ${f.sha256}`,
      );
  }
  for (const path of present.keys()) {
    if (!listed.has(path)) fileProblems.push(`${path}: not in the manifest`);
  }
  for (const link of walked.links)
    linkProblems.push(
      `${link.path}: a symbolic link (to ${link.target}), not a file of the directory`,
    );
  return { fileProblems, linkProblems };
}

/** The manifest's signature against the key it names and, when given, the trusted key. */
function checkSignature(
  manifest: Manifest,
  trusted: KeyObject | undefined,
): { signatureProblems: string[]; signature: SignatureState } {
  const sig = manifest.signature;
  const signatureProblems: string[] = [];
  if (sig === undefined) {
    if (trusted !== undefined)
      signatureProblems.push(
        "the manifest is not signed, and a public key was given",
      );
    return { signatureProblems, signature: { state: "unsigned" } };
  }
  let key: KeyObject | undefined;
  try {
    key = createPublicKey(String(sig.publicKey));
  } catch (err) {
    signatureProblems.push(
      `the signature's public key cannot be read: ${errorMessage(err)}`,
    );
  }
  if (key !== undefined) {
    if (publicKeyFingerprint(key) !== sig.publicKeyFingerprint)
      signatureProblems.push(
        "the signature's key fingerprint does not match its key",
      );
    if (
      trusted !== undefined &&
      publicKeyFingerprint(trusted) !== publicKeyFingerprint(key)
    )
      signatureProblems.push(
        `signed by key ${String(sig.publicKeyFingerprint)}, not by the given public key ${publicKeyFingerprint(trusted)}`,
      );
    if (!signatureMatches(manifest, key, String(sig.value)))
      signatureProblems.push(
        "the signature does not match the manifest's content: the manifest was changed after signing",
      );
  }
  const fingerprint = String(sig.publicKeyFingerprint);
  return {
    signatureProblems,
    signature:
      signatureProblems.length > 0
        ? { state: "invalid", fingerprint }
        : trusted !== undefined
          ? { state: "verified", fingerprint }
          : { state: "unchecked", fingerprint },
  };
}

function signatureMatches(
  manifest: Manifest,
  key: KeyObject,
  value: string,
): boolean {
  try {
    return verify(
      null,
      Buffer.from(canonicalJson(unsigned(manifest))),
      key,
      Buffer.from(value, "base64"),
    );
  } catch {
    // A signature value that is not an Ed25519 signature at all.
    return false;
  }
}
