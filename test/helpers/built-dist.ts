// The compiled package in dist/, built once per test run: vitest runs this module's `setup`
// (globalSetup of the integration and slow projects, vitest.config.ts) before any test file, so
// the tests that start the CLI as a child process (cli.ts) run what this checkout holds, and no
// test file compiles src/ itself. A dist/ newer than every source file is left as it is.
import { execFile } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { testTmpDir } from "./run-tmp.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const DIST = join(ROOT, "dist");

/** Files under `dir` whose names end with `suffix`, as paths. */
function filesUnder(dir: string, suffix: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(suffix))
    .map((f) => join(dir, f));
}

/**
 * True when dist/ holds a build of the sources as they are now: the compiler writes every output
 * file on each build, so the oldest output must be newer than the newest input.
 */
export function distIsFresh(): boolean {
  const outputs = filesUnder(DIST, ".js");
  if (outputs.length === 0) return false;
  const inputs = [
    ...filesUnder(join(ROOT, "src"), ".ts"),
    join(ROOT, "tsconfig.json"),
    join(ROOT, "tsconfig.build.json"),
  ];
  const newestInput = Math.max(...inputs.map((f) => statSync(f).mtimeMs));
  const oldestOutput = Math.min(...outputs.map((f) => statSync(f).mtimeMs));
  return oldestOutput > newestInput;
}

/** Where the run's migrated schema is written (schema-template.ts replays it). */
export function schemaTemplatePath(): string {
  return join(testTmpDir(), "schema-template.json");
}

export async function setup(): Promise<void> {
  await build();
  // The migrated schema every fresh test database replays (schema-template.ts).
  const out = schemaTemplatePath();
  if (existsSync(out)) return;
  await promisify(execFile)(
    process.execPath,
    [join(ROOT, "scripts", "schema-template.mjs"), out],
    { cwd: ROOT },
  );
}

async function build(): Promise<void> {
  if (distIsFresh()) return;
  try {
    await promisify(execFile)(
      process.execPath,
      [
        join(ROOT, "node_modules", "typescript", "bin", "tsc"),
        "-p",
        "tsconfig.build.json",
      ],
      { cwd: ROOT },
    );
  } catch (e) {
    const out = (e as { stdout?: string }).stdout ?? "";
    throw new Error(
      `building dist/ for the tests failed (npm run build shows the same):\n${out}`,
      { cause: e },
    );
  }
}
