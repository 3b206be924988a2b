// The Dockerfile read as its stages, for the tests that check the image without a Docker engine
// (the compose stack's and the Kubernetes deployment's). runtimeNpmCalls starts `sh`: for the
// integration tier only.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./dashboards.js";
import { testTmpDir } from "./run-tmp.js";

interface Stage {
  from: string;
  name: string | undefined;
  /** The stage's instructions, continuation lines joined, comments dropped. */
  lines: string[];
}

/** The Dockerfile's global ARG defaults and its stages. */
export function dockerfileStages(): {
  args: Map<string, string>;
  stages: Stage[];
} {
  const lines = readFileSync(join(REPO_ROOT, "Dockerfile"), "utf8")
    .replace(/\\\n\s*/g, " ")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
  const args = new Map<string, string>();
  const stages: Stage[] = [];
  for (const line of lines) {
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?$/i.exec(line);
    if (from) stages.push({ from: from[1] ?? "", name: from[2], lines: [] });
    else if (stages.length === 0) {
      const arg = /^ARG\s+(\w+)=(\S+)$/.exec(line);
      if (arg?.[1] !== undefined) args.set(arg[1], arg[2] ?? "");
    } else stages.at(-1)?.lines.push(line);
  }
  return { args, stages };
}

/** The final stage's user and group as numbers (USER uid[:gid]); undefined parts are names. */
export function imageUser(): {
  uid: number | undefined;
  gid: number | undefined;
  spec: string;
} {
  const runtime = dockerfileStages().stages.at(-1);
  const spec =
    runtime?.lines
      .filter((l) => /^USER\s/i.test(l))
      .at(-1)
      ?.replace(/^USER\s+/i, "") ?? "";
  const [user = "", group] = spec.split(":");
  const num = (v: string | undefined) =>
    v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined;
  return { uid: num(user), gid: num(group), spec };
}

/**
 * What `npm` is run with by the final stage's RUN instruction that installs the packages, under
 * the build args given (the stage's ARG defaults otherwise): the instruction runs in `sh` with
 * a stand-in `npm` on PATH that prints its arguments, one call a line.
 */
export function runtimeNpmCalls(
  buildArgs: Readonly<Record<string, string>> = {},
): string[] {
  const runtime = dockerfileStages().stages.at(-1);
  const lines = runtime?.lines ?? [];
  const install = lines.find((l) => /^RUN\s.*\bnpm ci\b/.test(l));
  if (install === undefined)
    throw new Error("the Dockerfile's final stage runs no `npm ci`");
  const defaults = Object.fromEntries(
    lines.flatMap((l) => {
      const m = /^ARG\s+(\w+)(?:=(\S*))?$/.exec(l);
      return m?.[1] === undefined ? [] : [[m[1], m[2] ?? ""]];
    }),
  );
  const bin = mkdtempSync(join(testTmpDir(), "sessionhouse-fake-npm-"));
  try {
    const npm = join(bin, "npm");
    writeFileSync(npm, '#!/bin/sh\necho "$@"\n', { mode: 0o755 });
    const out = execFileSync("sh", ["-c", install.replace(/^RUN\s+/, "")], {
      env: {
        PATH: `${bin}:${process.env.PATH ?? ""}`,
        ...defaults,
        ...buildArgs,
      },
      encoding: "utf8",
    });
    return out.split("\n").filter((l) => l !== "");
  } finally {
    rmSync(bin, { recursive: true, force: true });
  }
}
