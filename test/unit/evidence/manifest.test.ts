import { createHash, generateKeyPairSync } from "node:crypto";
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  MANIFEST_FILE,
  verifyEvidence,
  writeManifest,
} from "../../../src/evidence/manifest.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

function keyPair(dir: string, name: string): { priv: string; pub: string } {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const priv = join(dir, `${name}.pem`);
  const pub = join(dir, `${name}.pub`);
  writeFileSync(priv, privateKey.export({ type: "pkcs8", format: "pem" }));
  writeFileSync(pub, publicKey.export({ type: "spki", format: "pem" }));
  return { priv, pub };
}

function evidenceDir(): string {
  const dir = mkdtempSync(join(testTmpDir(), "evidence-"));
  writeFileSync(join(dir, "report.json"), '{"rows":3}\n');
  mkdirSync(join(dir, "csv"));
  writeFileSync(join(dir, "csv", "people.csv"), "person,sessions\nalice,3\n");
  return dir;
}

describe("evidence manifest", () => {
  it("lists every file with its SHA-256 and verifies unchanged, signed by the given key", () => {
    const dir = evidenceDir();
    const keys = keyPair(mkdtempSync(join(testTmpDir(), "keys-")), "a");
    const { manifest } = writeManifest(
      dir,
      { kind: "test" },
      { signingKeyFile: keys.priv },
    );
    expect(manifest.files.map((f) => f.path)).toEqual([
      "csv/people.csv",
      "report.json",
    ]);
    expect(manifest.files[1]).toEqual({
      path: "report.json",
      sha256: createHash("sha256").update('{"rows":3}\n').digest("hex"),
      bytes: 11,
    });
    const check = verifyEvidence(dir, { publicKeyFile: keys.pub });
    expect(check.problems).toEqual([]);
    expect(check.signed).toBe(true);
  });

  it("fails on one changed byte, a removed file and an added file", () => {
    const dir = evidenceDir();
    writeManifest(dir, { kind: "test" });
    const file = join(dir, "csv", "people.csv");
    const bytes = readFileSync(file);
    bytes[bytes.length - 2] = "4".charCodeAt(0);
    writeFileSync(file, bytes);
    writeFileSync(join(dir, "extra.txt"), "x");
    const problems = verifyEvidence(dir).problems;
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^csv\/people\.csv: SHA-256 is/);
    expect(problems[1]).toBe("extra.txt: not in the manifest");
  });

  it("fails on a manifest signed by another key, and on a manifest edited after signing", () => {
    const dir = evidenceDir();
    const keysDir = mkdtempSync(join(testTmpDir(), "keys-"));
    const mine = keyPair(keysDir, "mine");
    const theirs = keyPair(keysDir, "theirs");
    writeManifest(dir, { kind: "test" }, { signingKeyFile: theirs.priv });
    expect(
      verifyEvidence(dir, { publicKeyFile: mine.pub }).problems.join("\n"),
    ).toMatch(/not by the given public key/);

    writeManifest(dir, { kind: "test" }, { signingKeyFile: mine.priv });
    const path = join(dir, MANIFEST_FILE);
    writeFileSync(
      path,
      readFileSync(path, "utf8").replace('"kind": "test"', '"kind": "tost"'),
    );
    expect(
      verifyEvidence(dir, { publicKeyFile: mine.pub }).problems.join("\n"),
    ).toMatch(/changed after signing/);
  });

  it("says a manifest is unsigned when a public key is expected", () => {
    const dir = evidenceDir();
    writeManifest(dir, {});
    const keys = keyPair(mkdtempSync(join(testTmpDir(), "keys-")), "k");
    expect(verifyEvidence(dir, { publicKeyFile: keys.pub }).problems).toEqual([
      "the manifest is not signed, and a public key was given",
    ]);
  });

  it("gives the same manifest bytes for the same files and fields", () => {
    const dir = evidenceDir();
    const a = writeManifest(dir, { b: 1, a: { y: 2, x: 1 } }).sha256;
    const b = writeManifest(dir, { a: { x: 1, y: 2 }, b: 1 }).sha256;
    expect(a).toBe(b);
  });

  it("says whether a signature was checked: verified only by a key given, unchecked without one, invalid by another", () => {
    const dir = evidenceDir();
    const keysDir = mkdtempSync(join(testTmpDir(), "keys-"));
    const mine = keyPair(keysDir, "mine");
    const theirs = keyPair(keysDir, "theirs");
    writeManifest(dir, { kind: "test" }, { signingKeyFile: theirs.priv });
    const alone = verifyEvidence(dir);
    expect(alone.problems).toEqual([]);
    expect(alone.signature.state).toBe("unchecked");
    expect(
      verifyEvidence(dir, { publicKeyFile: theirs.pub }).signature.state,
    ).toBe("verified");
    const other = verifyEvidence(dir, { publicKeyFile: mine.pub });
    expect(other.signature.state).toBe("invalid");
    expect(other.signatureProblems).toEqual(other.problems);
    writeManifest(dir, {});
    expect(verifyEvidence(dir).signature).toEqual({ state: "unsigned" });
  });

  it("neither follows nor hashes a symbolic link: a file replaced by a link to the same bytes elsewhere is a problem", () => {
    const dir = evidenceDir();
    writeManifest(dir, { kind: "test" });
    const outside = join(
      mkdtempSync(join(testTmpDir(), "outside-")),
      "report.json",
    );
    writeFileSync(outside, readFileSync(join(dir, "report.json")));
    rmSync(join(dir, "report.json"));
    symlinkSync(outside, join(dir, "report.json"));
    const check = verifyEvidence(dir);
    expect(check.linkProblems).toEqual([
      `report.json: a symbolic link (to ${outside}), not a file of the directory`,
    ]);
    expect(check.problems).toContain("report.json: listed but missing");
  });

  it("writes the manifest readable by its owner only, also over one that was not", () => {
    const dir = evidenceDir();
    writeFileSync(join(dir, MANIFEST_FILE), "{}");
    chmodSync(join(dir, MANIFEST_FILE), 0o644);
    writeManifest(dir, { kind: "test" });
    expect(statSync(join(dir, MANIFEST_FILE)).mode & 0o777).toBe(0o600);
  });
});
