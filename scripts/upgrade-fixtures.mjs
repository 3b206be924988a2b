// Generates test/fixtures/upgrade/: for every set of migration files main has had (each commit on
// main's first-parent history that changed migrations/), a database synced by that commit's own
// CLI, dumped table by table. Run by hand (minutes; not in CI):
//
//   node scripts/upgrade-fixtures.mjs [--only <commit>]
//
// Each state is checked out into a temporary git worktree (node_modules linked to ours), built
// with that commit's tsconfig.build.json, and runs `demo --days 1 --seed 7 --sessions-per-day 40`
// against its own embedded data directory (the demo starts that commit's simulator in process
// and syncs through that commit's pipeline). Every table of the database is then written as
// gzip-compressed Native (types kept exactly, aggregate states included) with a manifest.json:
// the commit, the migrations that version recorded (schema_migrations), each table's columns
// and row count. A state whose build or demo fails is skipped and reported.
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, URL } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const OUT = join(ROOT, "test", "fixtures", "upgrade");
const DATABASE = "sessionhouse";
// Every session is kept; other tables (the directory's inventory, the aggregations' top values)
// keep their first rows in the table's order, so that the fixtures stay small.
const ROWS_PER_TABLE = 200;
const DEMO = ["demo", "--days", "1", "--seed", "7", "--sessions-per-day", "40"];

const git = (...args) =>
  execFileSync("git", args, { cwd: ROOT, encoding: "utf8" }).trim();

/** The migration files (0001_name.sql …) of a commit. */
function migrationFiles(commit) {
  return git("ls-tree", "--name-only", commit, "migrations/")
    .split("\n")
    .map((p) => p.replace(/^migrations\//, ""))
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f));
}

/** One commit per distinct set of migration files, oldest first. */
function states() {
  const commits = git(
    "log",
    "--first-parent",
    "--reverse",
    "--format=%H",
    "main",
    "--",
    "migrations",
  ).split("\n");
  const seen = new Set();
  const out = [];
  for (const commit of commits) {
    const files = migrationFiles(commit);
    const key = files.join(",");
    if (seen.has(key) || files.length === 0) continue;
    seen.add(key);
    out.push({ commit, files });
  }
  return out;
}

function stateName({ commit, files }) {
  const head = files.at(-1).slice(0, 4);
  return `${head}-${commit.slice(0, 7)}`;
}

/** Dumps every table of the database in `dataDir` (a child process: one engine per process). */
function dump(dataDir, dir) {
  const script = `
    import { Session } from "chdb";
    import { writeFileSync } from "node:fs";
    const [dataDir, dir, db] = process.argv.slice(1);
    const s = new Session(dataDir);
    const q = (sql) => s.query(sql, "JSONEachRow").split("\\n").filter(Boolean).map((l) => JSON.parse(l));
    const tables = q(\`SELECT name, engine FROM system.tables WHERE database = '\${db}'
      AND engine NOT IN ('View', 'MaterializedView') AND NOT startsWith(name, '.inner') ORDER BY name\`);
    const out = [];
    for (const { name, engine } of tables) {
      const columns = q(\`SELECT name, type FROM system.columns WHERE database = '\${db}' AND table = '\${name}'
        AND default_kind NOT IN ('MATERIALIZED', 'ALIAS', 'EPHEMERAL') ORDER BY position\`);
      const [{ n }] = q(\`SELECT toUInt64(count()) AS n FROM \\\`\${db}\\\`.\\\`\${name}\\\`\`);
      const limit = name === "sessions" ? "" : " LIMIT ${ROWS_PER_TABLE}";
      s.query(\`SELECT * FROM \\\`\${db}\\\`.\\\`\${name}\\\`\${limit} INTO OUTFILE '\${dir}/\${name}.native.gz' TRUNCATE COMPRESSION 'gzip' FORMAT Native\`, "CSV");
      out.push({ name, engine, rows: Math.min(Number(n), name === "sessions" ? Infinity : ${ROWS_PER_TABLE}), columns: columns.map((c) => c.name + " " + c.type) });
    }
    const migrations = q(\`SELECT version, name, checksum FROM \\\`\${db}\\\`.schema_migrations ORDER BY version\`);
    writeFileSync(\`\${dir}/tables.json\`, JSON.stringify({ tables: out, migrations }));
    s.cleanup?.();
  `;
  const r = spawnSync(
    process.execPath,
    ["--input-type=module", "-e", script, dataDir, dir, DATABASE],
    { cwd: ROOT, encoding: "utf8" },
  );
  if (r.status !== 0) throw new Error(`dump failed: ${r.stderr}`);
  return JSON.parse(readFileSync(join(dir, "tables.json"), "utf8"));
}

function generate(state) {
  const name = stateName(state);
  const work = mkdtempSync(join(tmpdir(), `upgrade-${name}-`));
  const tree = join(work, "tree");
  const data = join(work, "data");
  git("worktree", "add", "--detach", tree, state.commit);
  try {
    symlinkSync(join(ROOT, "node_modules"), join(tree, "node_modules"), "dir");
    // Old commits compiled against today's dependencies may report type errors; what matters
    // is that tsc emitted their JavaScript.
    spawnSync(
      process.execPath,
      [
        join(ROOT, "node_modules/typescript/bin/tsc"),
        "-p",
        "tsconfig.build.json",
      ],
      {
        cwd: tree,
        encoding: "utf8",
      },
    );
    if (!existsSync(join(tree, "dist", "cli", "main.js")))
      return { name, skipped: "the build emitted no dist/cli/main.js" };
    const demo = spawnSync(
      process.execPath,
      [join(tree, "bin", "sessionhouse.js"), ...DEMO],
      {
        cwd: tree,
        encoding: "utf8",
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          SESSIONHOUSE_DATA_DIR: data,
          CLICKHOUSE_DATABASE: DATABASE,
          SESSIONHOUSE_LOG_LEVEL: "warn",
        },
        timeout: 15 * 60_000,
      },
    );
    // A demo that failed after its sessions sync (an older simulator without an endpoint a
    // later step of that demo reads) still leaves what that version stored: it is dumped, and
    // the manifest says where the demo stopped.
    const demoError =
      demo.status === 0
        ? undefined
        : `demo exited with ${demo.status ?? demo.signal}: ${(demo.stderr || demo.stdout).trim().split("\n")[0]}`;
    if (
      demoError &&
      !existsSync(join(data, "store")) &&
      !existsSync(join(data, "metadata"))
    )
      return { name, skipped: demoError };
    const dir = join(OUT, name);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    let dumped;
    try {
      dumped = dump(data, dir);
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      return { name, skipped: demoError ?? err.message };
    }
    const { tables, migrations } = dumped;
    rmSync(join(dir, "tables.json"));
    const manifest = {
      commit: state.commit,
      generatedBy: `sessionhouse ${DEMO.join(" ")}`,
      ...(demoError ? { demoError } : {}),
      migrations,
      tables,
    };
    writeFileSync(
      join(dir, "manifest.json"),
      `${JSON.stringify(manifest, null, 2)}\n`,
    );
    const files = state.files.join(",");
    const recorded = migrations.map((m) => m.name).join(",");
    if (files !== recorded)
      return {
        name,
        warning: `recorded migrations (${recorded}) differ from the files (${files})`,
      };
    return {
      name,
      rows: tables.reduce((n, t) => n + t.rows, 0),
      tables: tables.length,
      ...(demoError ? { demoError } : {}),
    };
  } finally {
    git("worktree", "remove", "--force", tree);
    rmSync(work, { recursive: true, force: true });
  }
}

const only = process.argv.indexOf("--only");
const wanted = only >= 0 ? process.argv[only + 1] : undefined;
mkdirSync(OUT, { recursive: true });
const report = [];
for (const state of states()) {
  if (wanted && !state.commit.startsWith(wanted)) continue;
  const r = generate(state);
  report.push(r);
  console.log(JSON.stringify(r));
}
const skipped = report.filter((r) => r.skipped);
if (skipped.length) console.log(`skipped ${skipped.length} state(s)`);
// A digest of what was written, for the commit message.
const digest = createHash("sha256")
  .update(JSON.stringify(report))
  .digest("hex")
  .slice(0, 12);
console.log(
  `done: ${report.length - skipped.length} state(s) written (${digest})`,
);
