// The stream catalogue against what names a stream elsewhere: every stream the CLI's `sync` and
// the scheduler accept has an entry, and every entry reads through a read operation of the API
// (List*/Get*: never a write) whose answer's member is known.
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { LIST_MEMBERS } from "../../../src/api/answers.js";
import { PROCEDURES } from "../../../src/api/control-plane.js";
import { COMMAND_TREE } from "../../../src/cli/command-tree.js";
import { registerCommands } from "../../../src/cli/options.js";
import { loadConfig } from "../../../src/config/index.js";
import { STREAMS } from "../../../src/pipeline/names.js";
import { STREAM_SPECS } from "../../../src/pipeline/stream-specs.js";
import { planJobs } from "../../../src/scheduler/jobs.js";

/** `sync` subcommands that run no stream of their own, and why. */
const NOT_STREAMS: Readonly<Record<string, string>> = {
  reconcile: "lists the sessions stream's past days again; moves no checkpoint",
  rollups: "computes from stored sessions; reads nothing of the API",
};

const specs = Object.values(STREAM_SPECS);

describe("the stream catalogue", () => {
  it("has one entry per stream, each under its own name", () => {
    expect(Object.keys(STREAM_SPECS).sort()).toEqual([...STREAMS].sort());
    for (const [name, spec] of Object.entries(STREAM_SPECS))
      expect(spec.stream).toBe(name);
  });

  it("has an entry for every stream `sessionhouse sync` accepts", () => {
    const program = new Command();
    registerCommands(program, COMMAND_TREE, () => ({}));
    const sync = program.commands.find((c) => c.name() === "sync");
    const names = (sync?.commands ?? []).map((c) => c.name());
    expect(names).toContain("sessions");
    const streams = names.filter((n) => NOT_STREAMS[n] === undefined);
    expect(streams.sort()).toEqual([...STREAMS].sort());
  });

  it("has an entry for the stream of every job the scheduler runs that syncs one", () => {
    const config = loadConfig({
      env: {
        SESSIONHOUSE_API_URL: "https://cp.example.com",
        SESSIONHOUSE_API_KEY: "k-0123456789abcdef",
      },
    });
    const plans = planJobs(config, { includeDisabled: true });
    const syncing = plans.filter((p) =>
      ["sessions", "aggregation", "entity"].includes(p.kind),
    );
    expect(syncing.map((p) => p.kind)).toEqual(
      expect.arrayContaining(["sessions", "aggregation", "entity"]),
    );
    for (const plan of syncing) {
      expect(plan.sync, plan.name).toBeDefined();
      expect(Object.keys(STREAM_SPECS)).toContain(plan.sync?.stream);
    }
    // The other jobs read no stream of their own.
    for (const plan of plans.filter((p) => !syncing.includes(p)))
      expect(plan.sync, plan.name).toBeUndefined();
    // Every stream of the catalogue is scheduled.
    expect(new Set(syncing.map((p) => p.sync?.stream))).toEqual(
      new Set(STREAMS),
    );
  });

  it("reads each stream through a read operation of the API, never a write", () => {
    for (const spec of specs) {
      const op = spec.read.operation;
      expect(Object.keys(PROCEDURES), spec.stream).toContain(op);
      const method = PROCEDURES[op].split("/")[1] ?? "";
      expect(method, spec.stream).toMatch(/^(List|Get)[A-Z]/);
    }
    // The API's list holds nothing else.
    for (const procedure of Object.values(PROCEDURES))
      expect(procedure).toMatch(/^[A-Za-z]+Service\/(List|Get)[A-Z]\w*$/);
  });

  it("names, for each stream's operation, the member of its answer", () => {
    for (const spec of specs) {
      const op = spec.read.operation;
      expect(Object.keys(LIST_MEMBERS), spec.stream).toContain(op);
      expect(LIST_MEMBERS[op], spec.stream).not.toBe("");
    }
  });

  it("keeps the windowed streams' checkpoints by window and the others' by read time", () => {
    for (const spec of specs) {
      const windowed =
        spec.read.kind === "sessionWindows" ||
        spec.read.kind === "aggregationWindows";
      expect(spec.checkpoint.kind, spec.stream).toBe(
        windowed ? "windows" : "readTime",
      );
      expect(spec.id, spec.stream).not.toBe("");
    }
  });

  it("removes the secrets of the native users wherever they are read", () => {
    const secret = "s3cr3t-value";
    const nativeUser = {
      id: "nu-1",
      resourceId: "r-1",
      username: "app",
      secret,
      basic: { username: "app", password: secret },
      httpBearer: { header: "Authorization", token: secret },
    };
    const allowlisted = specs.filter((s) => s.secrets.kind === "allowlist");
    expect(allowlisted.map((s) => s.stream).sort()).toEqual([
      "identity_links",
      "native_users",
    ]);
    for (const spec of allowlisted) {
      if (spec.secrets.kind !== "allowlist") continue;
      const record =
        spec.stream === "identity_links"
          ? { id: "l-1", nativeUser }
          : nativeUser;
      const kept = JSON.stringify(spec.secrets.redact(record));
      expect(kept, spec.stream).not.toContain(secret);
      expect(kept, spec.stream).toContain('"username":"app"');
      expect(spec.secrets.dropped.length, spec.stream).toBeGreaterThan(0);
    }
  });
});
