// The compose stack, its provisioning and the exporter's image, checked without a Docker
// engine: files parse, images are pinned, every variable and mounted path exists, and the
// image's production tree (npm ci --omit=dev --omit=optional, read off package-lock.json)
// holds every package the compiled code imports, and no embedded engine.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { builtinModules } from "node:module";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { loadDashboards, REPO_ROOT } from "../../helpers/dashboards.js";
import {
  dockerfileStages,
  imageUser,
  runtimeNpmCalls,
} from "../../helpers/dockerfile.js";

const read = (path: string): string =>
  readFileSync(join(REPO_ROOT, path), "utf8");
// Compose files may use YAML merge keys (`<<: *anchor`); the yaml package applies them on request.
const parseYaml = (path: string): unknown => parse(read(path), { merge: true });

interface ComposeService {
  image?: string;
  build?: { context?: string } | string;
  profiles?: string[];
  command?: string[];
  environment?: Record<string, string | number | boolean | null>;
  volumes?: string[];
  ports?: string[];
  healthcheck?: { test?: string[] | string };
  depends_on?: Record<string, { condition?: string }>;
}
interface ComposeFile {
  services: Record<string, ComposeService>;
}

const compose = parseYaml("docker-compose.yml") as ComposeFile;
const services = compose.services;
const service = (name: string): ComposeService => {
  const s = services[name];
  if (!s) throw new Error(`docker-compose.yml has no service ${name}`);
  return s;
};
const env = (name: string): Record<string, string> =>
  Object.fromEntries(
    Object.entries(service(name).environment ?? {}).map(([k, v]) => [
      k,
      String(v),
    ]),
  );
const pkg = JSON.parse(read("package.json")) as {
  version: string;
  dependencies: Record<string, string>;
  optionalDependencies?: Record<string, string>;
};

/** `${NAME}`, `${NAME:-default}`, `${NAME:?message}` references, with whether they need a value from outside. */
function composeVariables(text: string): { name: string; required: boolean }[] {
  return [...text.matchAll(/\$\{(\w+)(?:(:?[-?])[^}]*)?\}/g)].map((m) => ({
    name: m[1] ?? "",
    required: m[2] === undefined || m[2].endsWith("?"),
  }));
}

function dotenv(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split("\n")) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (m?.[1] !== undefined) out.set(m[1], m[2] ?? "");
  }
  return out;
}

describe("docker-compose.yml", () => {
  it("names only images with a pinned version", () => {
    for (const [name, s] of Object.entries(services)) {
      expect(s.image, `service ${name}`).toBeDefined();
      const image = s.image ?? "";
      expect(image, name).not.toMatch(/:latest$/);
      // registry/name:1.2.3 (a full version, optionally with a suffix such as -alpine).
      expect(image, name).toMatch(/^[\w./-]+:\d+\.\d+\.\d+[\w.-]*$/);
    }
    // The image built from the Dockerfile carries the package's version.
    for (const name of ["exporter", "exporter-demo", "simulator"]) {
      expect(service(name).image).toBe(`sessionhouse:${pkg.version}`);
      expect(service(name).build).toBeDefined();
    }
  });

  it("runs ClickHouse with a healthcheck the exporters and Grafana wait for", () => {
    expect(service("clickhouse").image).toMatch(
      /^clickhouse\/clickhouse-server:\d+\.\d+\.\d+\.\d+$/,
    );
    expect(service("clickhouse").healthcheck?.test).toBeDefined();
    for (const name of ["grafana", "exporter", "exporter-demo"]) {
      expect(service(name).depends_on?.clickhouse?.condition, name).toBe(
        "service_healthy",
      );
    }
  });

  it("publishes ports on the host's loopback only", () => {
    for (const [name, s] of Object.entries(services))
      for (const port of s.ports ?? [])
        expect(port, name).toMatch(/^127\.0\.0\.1:/);
  });

  it("checks Grafana's health at /api/health", () => {
    const test = service("grafana").healthcheck?.test;
    expect(Array.isArray(test) ? test.join(" ") : test).toMatch(
      /http:\/\/127\.0\.0\.1:3000\/api\/health/,
    );
  });

  it("installs the ClickHouse plugin at the version the dashboards are written for", () => {
    const [, version] =
      /^grafana-clickhouse-datasource@(\d+\.\d+\.\d+)$/.exec(
        env("grafana").GF_PLUGINS_PREINSTALL_SYNC ?? "",
      ) ?? [];
    expect(version).toBeDefined();
    const versions = new Set(
      loadDashboards().flatMap((d) =>
        d.dashboard.panels.flatMap((p) =>
          p.targets.map((t) => t.pluginVersion),
        ),
      ),
    );
    expect([...versions]).toEqual([version]);
  });

  it("mounts the provisioning and the dashboards where Grafana and the provider look", () => {
    const volumes = service("grafana").volumes ?? [];
    expect(volumes).toContain(
      "./dashboards/provisioning/datasources:/etc/grafana/provisioning/datasources:ro",
    );
    expect(volumes).toContain(
      "./dashboards/provisioning/dashboards:/etc/grafana/provisioning/dashboards:ro",
    );
    expect(volumes).toContain(
      "./dashboards/provisioning/alerting:/etc/grafana/provisioning/alerting:ro",
    );
    const provider = parseYaml(
      "dashboards/provisioning/dashboards/sessionhouse.yaml",
    ) as { providers: { options: { path: string } }[] };
    const path = provider.providers[0]?.options.path;
    expect(volumes).toContain(`./dashboards:${path}:ro`);
    expect(env("grafana").GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH).toBe(
      `${path}/sessions-overview.json`,
    );
  });

  it("mounts only paths that exist", () => {
    for (const [name, s] of Object.entries(services)) {
      for (const v of s.volumes ?? []) {
        const host = v.split(":")[0] ?? "";
        if (host.startsWith("."))
          expect(existsSync(join(REPO_ROOT, host)), `${name}: ${host}`).toBe(
            true,
          );
      }
    }
  });

  it("runs `sessionhouse run` against the ClickHouse service, live from .env, or the simulator in the demo", () => {
    for (const name of ["exporter", "exporter-demo"]) {
      expect(service(name).command, name).toEqual(["run"]);
      expect(env(name).CLICKHOUSE_URL, name).toBe("http://clickhouse:8123");
      expect(env(name).CLICKHOUSE_PASSWORD, name).toMatch(
        /^\$\{CLICKHOUSE_PASSWORD/,
      );
    }
    expect(service("exporter").profiles).toEqual(["live"]);
    expect(env("exporter").SESSIONHOUSE_API_URL).toMatch(
      /^\$\{SESSIONHOUSE_API_URL/,
    );
    expect(env("exporter").SESSIONHOUSE_API_KEY).toMatch(
      /^\$\{SESSIONHOUSE_API_KEY/,
    );

    expect(service("simulator").profiles).toEqual(["demo"]);
    expect(service("exporter-demo").profiles).toEqual(["demo"]);
    const sim = service("simulator").command ?? [];
    expect(sim.slice(0, 1)).toEqual(["simulate"]);
    expect(sim[sim.indexOf("--host") + 1]).toBe("0.0.0.0");
    expect(sim[sim.indexOf("--clock") + 1]).toMatch(/^accelerated:\d+$/);
    expect(env("exporter-demo").SESSIONHOUSE_API_URL).toBe(
      `http://simulator:${sim[sim.indexOf("--port") + 1]}`,
    );
    expect(env("simulator").SIMULATOR_API_KEY).toMatch(
      /^\$\{SIMULATOR_API_KEY/,
    );
    expect(env("exporter-demo").SESSIONHOUSE_API_KEY).toMatch(
      /^\$\{SIMULATOR_API_KEY/,
    );
    expect(service("exporter-demo").depends_on?.simulator?.condition).toBe(
      "service_healthy",
    );
  });

  it("takes every credential from .env, and .env.example sets every variable it uses", () => {
    const example = dotenv(read(".env.example"));
    for (const { name } of composeVariables(read("docker-compose.yml")))
      expect(example.has(name), name).toBe(true);
    expect(example.get("COMPOSE_PROFILES")).toBe("live");
    for (const [name, s] of Object.entries(services)) {
      for (const [k, v] of Object.entries(s.environment ?? {})) {
        if (/PASSWORD|API_KEY/.test(k))
          expect(String(v), `${name}.${k}`).toMatch(/^\$\{\w+/);
      }
    }
  });

  // The Docker CLI is only a client here and may lack the compose plugin; where it has it,
  // Compose's own parser has the last word.
  const hasCompose = (() => {
    try {
      execFileSync("docker", ["compose", "version"], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  })();
  it.skipIf(!hasCompose)(
    "passes `docker compose config` for both profiles",
    () => {
      for (const profile of ["live", "demo"]) {
        execFileSync(
          "docker",
          [
            "compose",
            "--env-file",
            ".env.example",
            "--profile",
            profile,
            "config",
            "--quiet",
          ],
          { cwd: REPO_ROOT },
        );
      }
    },
  );
});

describe("provisioning", () => {
  const grafanaEnv = env("grafana");
  // Variables a file names outside its comments.
  const referenced = (text: string) =>
    [...text.replace(/^\s*#.*$/gm, "").matchAll(/\$\{?(\w+)\}?/g)].map(
      (m) => m[1] ?? "",
    );

  it("provisions the ClickHouse data source with credentials from the environment", () => {
    const text = read("dashboards/provisioning/datasources/clickhouse.yaml");
    const file = parse(text) as {
      datasources: {
        type: string;
        uid: string;
        isDefault: boolean;
        jsonData: Record<string, unknown>;
        secureJsonData: Record<string, string>;
      }[];
    };
    const [ds] = file.datasources;
    expect(ds?.type).toBe("grafana-clickhouse-datasource");
    expect(ds?.isDefault).toBe(true);
    for (const field of [
      "host",
      "port",
      "protocol",
      "username",
      "defaultDatabase",
    ])
      expect(ds?.jsonData[field], field).toBeDefined();
    expect(ds?.jsonData).not.toHaveProperty("password");
    expect(ds?.secureJsonData.password).toMatch(/^\$\{\w+\}$/);
    expect(ds?.jsonData.username).toMatch(/^\$\{\w+\}$/);
    // Grafana interpolates its own environment: compose must set every variable the file names.
    for (const name of referenced(text))
      expect(grafanaEnv[name], name).toBeDefined();
  });

  it("creates Grafana's read-only ClickHouse user from the ClickHouse service's environment", () => {
    const path = "dashboards/provisioning/clickhouse/grafana-reader.sh";
    expect(statSync(join(REPO_ROOT, path)).mode & 0o111).not.toBe(0);
    const chEnv = env("clickhouse");
    for (const name of referenced(read(path)).filter((n) =>
      /^[A-Z_]+$/.test(n),
    ))
      expect(chEnv[name], name).toBeDefined();
    expect(chEnv.GRAFANA_CLICKHOUSE_USER).toBe(
      grafanaEnv.SESSIONHOUSE_GRAFANA_CLICKHOUSE_USER,
    );
    expect(chEnv.GRAFANA_CLICKHOUSE_PASSWORD).toBe(
      grafanaEnv.SESSIONHOUSE_GRAFANA_CLICKHOUSE_PASSWORD,
    );
  });
});

// ---------------------------------------------------------------------------------------------
// The image

describe("Dockerfile", () => {
  const { args, stages } = dockerfileStages();
  const runtime = stages.at(-1);
  const resolveImage = (from: string) =>
    from.replace(/^\$\{(\w+)\}$/, (_, n: string) => args.get(n) ?? from);

  it("builds in one stage and runs from a pinned slim Node.js 20 image", () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const s of stages)
      expect(resolveImage(s.from)).toMatch(/^node:20\.\d+\.\d+-\w+-slim$/);
    const build = stages[0]?.lines.join("\n") ?? "";
    expect(build).toMatch(/RUN npm ci\b/);
    expect(build).toMatch(/RUN npm run build/);
  });

  it("installs the production tree only, without the embedded engine, as a non-root user", () => {
    const lines = runtime?.lines ?? [];
    const [install, ...more] = runtimeNpmCalls();
    expect(install).toMatch(
      /^ci --omit=dev --omit=optional --ignore-scripts\b/,
    );
    expect(more.every((call) => !call.startsWith("ci "))).toBe(true);
    const user = imageUser();
    expect(user.uid, `USER ${user.spec}`).toBeGreaterThan(0);
    expect(lines).toContain(
      `COPY --from=${stages[0]?.name ?? ""} /app/dist ./dist`,
    );
    expect(lines).toContain("COPY bin ./bin");
    expect(lines).toContain("COPY migrations ./migrations");
    expect(lines.some((l) => /^COPY\s+\.\s/.test(l))).toBe(false);
    expect(lines).toContain('ENTRYPOINT ["node", "bin/sessionhouse.js"]');
    expect(lines).toContain('CMD ["run"]');
  });

  it("keeps local state and secrets out of the build context", () => {
    const ignored = read(".dockerignore").split("\n");
    for (const entry of ["node_modules", "dist", "data", ".git", ".env"])
      expect(ignored, entry).toContain(entry);
  });
});

interface LockEntry {
  version?: string;
  dev?: boolean;
  optional?: boolean;
  devOptional?: boolean;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

/** package-lock paths npm ci --omit=dev --omit=optional installs. */
function productionTree(): Map<string, LockEntry> {
  const lock = JSON.parse(read("package-lock.json")) as {
    packages: Record<string, LockEntry>;
  };
  return new Map(
    Object.entries(lock.packages).filter(
      ([path, e]) => path !== "" && !e.dev && !e.optional && !e.devOptional,
    ),
  );
}

/** Node's resolution of `name` from the package at lock path `from`: nearest node_modules up to the root. */
function resolveIn(
  tree: ReadonlyMap<string, LockEntry>,
  from: string,
  name: string,
): string | undefined {
  for (let dir = from; ;) {
    const candidate = `${dir}/node_modules/${name}`;
    if (tree.has(candidate)) return candidate;
    const parent = dir.lastIndexOf("/node_modules/");
    if (parent === -1) break;
    dir = dir.slice(0, parent);
  }
  return tree.has(`node_modules/${name}`) ? `node_modules/${name}` : undefined;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** Packages the compiled code loads: static imports and re-exports that survive compilation, and dynamic imports. */
function runtimeImports(): { pkg: string; file: string; dynamic: boolean }[] {
  const out: { pkg: string; file: string; dynamic: boolean }[] = [];
  for (const file of sourceFiles(join(REPO_ROOT, "src"))) {
    const text = readFileSync(file, "utf8");
    const specifiers: { spec: string; dynamic: boolean }[] = [];
    // `import type` and `export type` are erased; anything else stays (verbatimModuleSyntax).
    for (const m of text.matchAll(
      /^\s*(?:import|export)\s+(?!type\s)[^;]*?\bfrom\s+["']([^"']+)["']/gm,
    ))
      specifiers.push({ spec: m[1] ?? "", dynamic: false });
    for (const m of text.matchAll(/^\s*import\s+["']([^"']+)["']/gm))
      specifiers.push({ spec: m[1] ?? "", dynamic: false });
    for (const m of text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g))
      specifiers.push({ spec: m[1] ?? "", dynamic: true });
    for (const { spec, dynamic } of specifiers) {
      if (
        spec.startsWith(".") ||
        spec.startsWith("node:") ||
        builtinModules.includes(spec.split("/")[0] ?? "")
      )
        continue;
      const parts = spec.split("/");
      const name = spec.startsWith("@")
        ? parts.slice(0, 2).join("/")
        : (parts[0] ?? spec);
      out.push({ pkg: name, file: relative(REPO_ROOT, file), dynamic });
    }
  }
  return out;
}

describe("the image's production tree", () => {
  const tree = productionTree();
  const imports = runtimeImports();

  it("holds every package the compiled code imports statically", () => {
    expect(imports.length).toBeGreaterThan(0);
    for (const { pkg: name, file, dynamic } of imports) {
      if (dynamic && pkg.optionalDependencies?.[name] !== undefined) continue;
      expect(
        pkg.dependencies[name],
        `${file} imports ${name}: not a production dependency`,
      ).toBeDefined();
      expect(
        tree.has(`node_modules/${name}`),
        `${name} is not installed by npm ci --omit=dev`,
      ).toBe(true);
    }
  });

  it("imports optional packages only dynamically, so the image runs without them", () => {
    for (const name of Object.keys(pkg.optionalDependencies ?? {})) {
      for (const i of imports.filter((x) => x.pkg === name))
        expect(i.dynamic, `${i.file} imports ${name} statically`).toBe(true);
    }
  });

  it("is closed: every production package's own dependencies are in it", () => {
    for (const [path, entry] of tree) {
      for (const dep of Object.keys(entry.dependencies ?? {}))
        expect(
          resolveIn(tree, path, dep),
          `${path} needs ${dep}`,
        ).toBeDefined();
      for (const dep of Object.keys(entry.peerDependencies ?? {})) {
        if (entry.peerDependenciesMeta?.[dep]?.optional) continue;
        expect(
          resolveIn(tree, path, dep),
          `${path} needs its peer ${dep}`,
        ).toBeDefined();
      }
    }
  });

  it("leaves out the embedded engine and the toolchain", () => {
    for (const path of tree.keys()) {
      expect(path).not.toMatch(
        /node_modules\/(chdb|@chdb\/|typescript|vitest|testcontainers)(\/|$)/,
      );
    }
  });

  it("starts from bin/, which loads only the compiled code", () => {
    const bin = read("bin/sessionhouse.js");
    const specs = [
      ...bin.matchAll(
        /\bfrom\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g,
      ),
    ].map((m) => m[1] ?? m[2]);
    expect(specs.length).toBeGreaterThan(0);
    for (const s of specs) expect(s).toMatch(/^\.\.\/dist\//);
  });
});
