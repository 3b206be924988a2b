// The bench's options, checked before anything runs. run.ts imports this module first: its
// check runs when the module is evaluated, before the parts' modules (which read their own
// BENCH_* variables when they are evaluated) and before any load. A value it cannot use stops
// the run with one line naming the variable and what to give, and exit code 2.
import { byNearness } from "../src/util/nearest.js";
import { END_MS } from "./harness.js";
import {
  BenchInputError,
  loadWindow,
  rangesAsked,
  scaleParts,
  scaleSessions,
  scaleShape,
} from "./scale-options.js";

/** The parts of the bench (BENCH_ONLY), in the order a full run takes them. */
const BENCH_PARTS = [
  "sessions",
  "latency",
  "aggregations",
  "dashboards",
  "retention",
  "detections",
  "alerts",
  "ttd",
  "reports",
  "scale",
] as const;
export type BenchPart = (typeof BENCH_PARTS)[number];

/** BENCH_ONLY as a list of parts; a name not in BENCH_PARTS is refused with the nearest ones. */
export function benchOnly(
  env: Readonly<Record<string, string | undefined>>,
): BenchPart[] | undefined {
  if (env.BENCH_ONLY === undefined) return undefined;
  return env.BENCH_ONLY.split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map((name) => {
      const part = BENCH_PARTS.find((p) => p === name);
      if (part === undefined)
        throw new BenchInputError(
          `BENCH_ONLY=${env.BENCH_ONLY}: no part named "${name}"; give a comma list of ${byNearness(name, BENCH_PARTS).join(", ")}`,
        );
      return part;
    });
}

/**
 * Whether the run takes a part: the ones BENCH_ONLY names, else every part but the reports
 * (about four minutes: asked for by name) and the scale part unless BENCH_SCALE is set.
 */
export function partRuns(
  part: BenchPart,
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  const only = benchOnly(env);
  return only
    ? only.includes(part)
    : part !== "reports" && (part !== "scale" || env.BENCH_SCALE !== undefined);
}

/** Every BENCH_* variable of the parts the run will take, checked; throws BenchInputError. */
function checkBenchInput(
  env: Readonly<Record<string, string | undefined>>,
): void {
  if (!partRuns("scale", env)) return;
  scaleSessions(env.BENCH_SCALE ?? "1m");
  scaleShape(env);
  scaleParts(env);
  rangesAsked(env);
  loadWindow(env, END_MS);
}

try {
  checkBenchInput(process.env);
} catch (e) {
  if (!(e instanceof BenchInputError)) throw e;
  process.stderr.write(`bench: ${e.message}\n`);
  process.exit(2);
}
