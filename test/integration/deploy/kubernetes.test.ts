// The Kubernetes deployment as `kubectl kustomize` renders it, for both variants (a ClickHouse
// server, deploy/kubernetes; the embedded engine, deploy/kubernetes/overlays/embedded): every
// object valid against the Kubernetes schemas (kubernetes-models), the settings the exporter
// reads and accepts, the probes on the routes the ops server serves, the Secret the docs create,
// the pod's security context, and a NetworkPolicy that lets out only what the exporter reaches.
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { ServiceMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1";
import { Deployment } from "kubernetes-models/apps/v1";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import {
  ConfigMap,
  PersistentVolumeClaim,
  Service,
  type IContainer,
  type IContainerPort,
  type IEnvVar,
} from "kubernetes-models/v1";
import { loadConfig, type Config } from "../../../src/config/index.js";
import { Metrics } from "../../../src/ops/metrics.js";
import type { ReadinessReport } from "../../../src/ops/readiness.js";
import { startOpsServer, type OpsServer } from "../../../src/ops/server.js";
import { envNamesTheLoaderReads } from "../../helpers/config-env.js";
import { REPO_ROOT } from "../../helpers/dashboards.js";
import { imageUser, runtimeNpmCalls } from "../../helpers/dockerfile.js";
import { memoryLogger } from "../../helpers/logs.js";

const KUBECTL = "kubectl";
const HAVE_KUBECTL =
  spawnSync(KUBECTL, ["version", "--client"], { stdio: "ignore" }).status === 0;
if (!HAVE_KUBECTL)
  console.warn(
    "skipped: the Kubernetes deployment is not rendered, kubectl is not installed (Debian: apt-get install kubernetes-client; .ci/run installs it)",
  );

const DOCS = "docs/running-as-a-service.md";

let server: OpsServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The kinds the deployment may hold, each with its model: validate() names the first wrong field. */
const MODELS = {
  "apps/v1/Deployment": Deployment,
  "v1/Service": Service,
  "monitoring.coreos.com/v1/ServiceMonitor": ServiceMonitor,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
  "v1/ConfigMap": ConfigMap,
  "v1/PersistentVolumeClaim": PersistentVolumeClaim,
} as const;
type Kind = keyof typeof MODELS;
type Model<K extends Kind> = InstanceType<(typeof MODELS)[K]>;
const isKind = (kind: string): kind is Kind => Object.hasOwn(MODELS, kind);

/** The objects of one variant, each checked against its schema while it is read. */
interface Rendered {
  deployment: Deployment;
  service: Service;
  serviceMonitor: ServiceMonitor;
  budget: PodDisruptionBudget;
  networkPolicy: NetworkPolicy;
  configMaps: ConfigMap[];
  claims: PersistentVolumeClaim[];
  kinds: string[];
}

/** Renders a kustomization and validates every object; an object of another kind fails. */
function render(dir: string): Rendered {
  const text = execFileSync(KUBECTL, ["kustomize", join(REPO_ROOT, dir)], {
    encoding: "utf8",
    // Newer kubectl warns on stderr about the kustomize v2 field names the files use on purpose.
    stdio: ["ignore", "pipe", "pipe"],
  });
  const objects: { kind: Kind; model: Model<Kind> }[] = [];
  for (const doc of parseAllDocuments(text)) {
    const obj = doc.toJS() as { apiVersion?: string; kind?: string } | null;
    if (obj === null) continue;
    const kind = `${obj.apiVersion ?? "?"}/${obj.kind ?? "?"}`;
    if (!isKind(kind))
      throw new Error(
        `${dir} renders a ${kind}, which this test has no schema for`,
      );
    // The constructors take their own kind's fields: `never` stands for whichever it is.
    const model = new MODELS[kind](obj as never);
    model.validate();
    objects.push({ kind, model });
  }
  const all = <K extends Kind>(kind: K): Model<K>[] =>
    objects.filter((o) => o.kind === kind).map((o) => o.model as Model<K>);
  const one = <K extends Kind>(kind: K): Model<K> => {
    const [first, ...more] = all(kind);
    if (first === undefined || more.length > 0)
      throw new Error(`${dir} renders ${all(kind).length} of ${kind}, not one`);
    return first;
  };
  return {
    deployment: one("apps/v1/Deployment"),
    service: one("v1/Service"),
    serviceMonitor: one("monitoring.coreos.com/v1/ServiceMonitor"),
    budget: one("policy/v1/PodDisruptionBudget"),
    networkPolicy: one("networking.k8s.io/v1/NetworkPolicy"),
    configMaps: all("v1/ConfigMap"),
    claims: all("v1/PersistentVolumeClaim"),
    kinds: objects.map((o) => o.kind),
  };
}

function exporterContainer(r: Rendered): IContainer {
  const containers = r.deployment.spec?.template.spec?.containers ?? [];
  expect(containers).toHaveLength(1);
  const [container] = containers;
  if (!container) throw new Error("the Deployment has no container");
  return container;
}

function opsPort(container: IContainer): IContainerPort {
  const port = container.ports?.find((p) => p.name === "ops");
  if (!port) throw new Error("the container has no port named ops");
  return port;
}

/** A port given by name or number refers to the container's ops port. */
function isOpsPort(port: string | number | undefined, ops: IContainerPort) {
  return port === ops.name || port === ops.containerPort;
}

/** The Secret the docs create: its name and the keys of its --from-literal/--from-file parts. */
function documentedSecret(): { name: string; keys: Set<string> } {
  const text = readFileSync(join(REPO_ROOT, DOCS), "utf8").replace(
    /\\\n\s*/g,
    " ",
  );
  const m = /kubectl (?:-n \S+ )?create secret generic (\S+)([^\n]*)/.exec(
    text,
  );
  if (!m?.[1]) throw new Error(`${DOCS} shows no \`kubectl create secret\``);
  const keys = [
    ...(m[2] ?? "").matchAll(/--from-(?:literal|file)=([\w.-]+)=/g),
  ];
  return { name: m[1], keys: new Set(keys.map((k) => k[1] ?? "")) };
}

/** The image tags the docs build, by the build args given (none, or WITH_EMBEDDED=true). */
function documentedImages(): Map<string, string> {
  const text = readFileSync(join(REPO_ROOT, DOCS), "utf8");
  return new Map(
    [...text.matchAll(/docker build (?:--build-arg (\S+) )?-t (\S+) \./g)].map(
      (m) => [m[1] ?? "", m[2] ?? ""],
    ),
  );
}

/** What a value from a Secret stands in for: long enough not to draw the short-secret warning. */
const SECRET_STAND_IN = "a-secret-from-the-secret-object";

/**
 * The container's environment as the exporter sees it: the ConfigMaps of envFrom, then env
 * (secret references as a stand-in value). SESSIONHOUSE_API_URL is left empty on purpose (the
 * exporter refuses to start until it is set), so a URL is given for it here.
 */
function podEnvironment(
  r: Rendered,
  container: IContainer,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    const name = source.configMapRef?.name;
    expect(name, "envFrom takes ConfigMaps only").toBeDefined();
    const cm = r.configMaps.find((c) => c.metadata?.name === name);
    expect(
      cm,
      `envFrom names ConfigMap ${name ?? ""}, which is not rendered`,
    ).toBeDefined();
    Object.assign(env, cm?.data ?? {});
  }
  for (const e of container.env ?? [])
    env[e.name] = e.valueFrom?.secretKeyRef ? SECRET_STAND_IN : (e.value ?? "");
  expect(
    env.SESSIONHOUSE_API_URL,
    "SESSIONHOUSE_API_URL is to be set by the operator",
  ).toBe("");
  return { ...env, SESSIONHOUSE_API_URL: "https://api.example.com" };
}

function urlPort(url: string): number {
  const u = new URL(url);
  return u.port !== "" ? Number(u.port) : u.protocol === "https:" ? 443 : 80;
}

const VARIANTS = [
  { variant: "a ClickHouse server", dir: "deploy/kubernetes", buildArg: "" },
  {
    variant: "the embedded engine",
    dir: "deploy/kubernetes/overlays/embedded",
    buildArg: "WITH_EMBEDDED=true",
  },
] as const;

// One long callback per variant on purpose: its checks share the objects rendered once.
describe.skipIf(!HAVE_KUBECTL).each(VARIANTS)(
  "the Kubernetes deployment for $variant ($dir)",
  ({ dir, buildArg }) => {
    let r: Rendered;
    let container: IContainer;
    let env: Record<string, string>;
    let config: Config;
    beforeAll(() => {
      r = render(dir);
      container = exporterContainer(r);
      env = podEnvironment(r, container);
      config = loadConfig({ env });
    });

    it("renders valid objects of the kinds it needs", () => {
      for (const kind of [
        "apps/v1/Deployment",
        "v1/Service",
        "monitoring.coreos.com/v1/ServiceMonitor",
        "policy/v1/PodDisruptionBudget",
        "networking.k8s.io/v1/NetworkPolicy",
        "v1/ConfigMap",
      ])
        expect(r.kinds, kind).toContain(kind);
    });

    it("runs one exporter, the old pod gone before a new one starts", () => {
      expect(r.deployment.spec?.replicas).toBe(1);
      expect(r.deployment.spec?.strategy?.type).toBe("Recreate");
      expect(
        r.deployment.spec?.template.spec?.automountServiceAccountToken,
      ).toBe(false);
    });

    it("sets only environment variables the exporter reads", () => {
      const read = envNamesTheLoaderReads();
      for (const name of Object.keys(env))
        expect(
          read.has(name),
          `${dir} sets ${name}, which the exporter does not read`,
        ).toBe(true);
    });

    it("holds settings the exporter accepts: the ops server on every interface, on the container's ops port", () => {
      expect(config.service.opsHost).toBe("0.0.0.0");
      expect(opsPort(container).containerPort).toBe(config.service.opsPort);
      expect(opsPort(container).protocol ?? "TCP").toBe("TCP");
    });

    it("takes the API key and the ClickHouse password from the Secret the docs create, never from the ConfigMap", () => {
      const secret = documentedSecret();
      const refs = (container.env ?? []).flatMap((e: IEnvVar) =>
        e.valueFrom?.secretKeyRef
          ? [{ env: e.name, ref: e.valueFrom.secretKeyRef }]
          : [],
      );
      expect(refs.map((x) => x.env)).toContain("SESSIONHOUSE_API_KEY");
      for (const { env: name, ref } of refs) {
        expect(ref.name, name).toBe(secret.name);
        expect(
          secret.keys.has(ref.key),
          `${name}: key ${ref.key} is not created in ${DOCS}`,
        ).toBe(true);
        expect(ref.optional ?? false, name).toBe(false);
      }
      // A server needs its password; the embedded engine has none.
      expect(refs.some((x) => x.env === "CLICKHOUSE_PASSWORD")).toBe(
        config.clickhouse.url !== undefined,
      );
      for (const cm of r.configMaps)
        for (const secretName of [
          "SESSIONHOUSE_API_KEY",
          "CLICKHOUSE_PASSWORD",
        ])
          expect(cm.data ?? {}, secretName).not.toHaveProperty(secretName);
      if (config.clickhouse.url !== undefined)
        expect(new URL(config.clickhouse.url).password).toBe("");
    });

    it("runs as the image's non-root user, read-only, without privileges", () => {
      const pod = r.deployment.spec?.template.spec?.securityContext ?? {};
      const c = container.securityContext ?? {};
      const user = imageUser();
      expect(c.runAsNonRoot ?? pod.runAsNonRoot).toBe(true);
      expect(c.runAsUser ?? pod.runAsUser).toBe(user.uid);
      expect(c.runAsGroup ?? pod.runAsGroup).toBe(user.gid);
      expect(c.readOnlyRootFilesystem).toBe(true);
      expect(c.allowPrivilegeEscalation).toBe(false);
      expect(c.privileged ?? false).toBe(false);
      expect(c.capabilities?.drop).toEqual(["ALL"]);
      expect(c.capabilities?.add ?? []).toEqual([]);
      expect((c.seccompProfile ?? pod.seccompProfile)?.type).toBe(
        "RuntimeDefault",
      );
    });

    it("mounts a writable directory wherever the exporter writes", () => {
      const volumes = r.deployment.spec?.template.spec?.volumes ?? [];
      const mountOf = (path: string) =>
        (container.volumeMounts ?? [])
          .filter(
            (m) => path === m.mountPath || path.startsWith(`${m.mountPath}/`),
          )
          .sort((a, b) => b.mountPath.length - a.mountPath.length)[0];
      // Block files go to the temporary directory: TMPDIR, else /tmp (a pod's /dev/shm is too small).
      const tmp = mountOf(env.TMPDIR ?? "/tmp");
      expect(tmp, "no volume on the temporary directory").toBeDefined();
      expect(volumes.find((v) => v.name === tmp?.name)?.emptyDir).toBeDefined();
      for (const m of container.volumeMounts ?? [])
        expect(m.readOnly ?? false, m.mountPath).toBe(false);
      if (config.clickhouse.url === undefined) {
        // The embedded engine's data directory lives on the claim, below its mount.
        const data = mountOf(config.clickhouse.dataDir);
        expect(
          data,
          `no volume holds ${config.clickhouse.dataDir}`,
        ).toBeDefined();
        expect(config.clickhouse.dataDir).not.toBe(data?.mountPath);
        const claim = volumes.find((v) => v.name === data?.name)
          ?.persistentVolumeClaim?.claimName;
        expect(r.claims.map((c) => c.metadata?.name)).toContain(claim);
        // The volume is the group's: fsGroup lets the image's user write it.
        expect(r.deployment.spec?.template.spec?.securityContext?.fsGroup).toBe(
          imageUser().gid,
        );
      }
    });

    it("probes /healthz for liveness and /readyz for readiness on the ops port, routes the ops server serves", async () => {
      const ops = opsPort(container);
      const live = container.livenessProbe?.httpGet;
      const ready = container.readinessProbe?.httpGet;
      expect(isOpsPort(live?.port, ops)).toBe(true);
      expect(isOpsPort(ready?.port, ops)).toBe(true);
      expect(isOpsPort(container.startupProbe?.httpGet?.port, ops)).toBe(true);
      // The ops server itself, unready: liveness must still answer 200, readiness 503.
      let report: ReadinessReport = {
        ready: false,
        reasons: ["ClickHouse does not answer"],
        clickhouse: { ok: false },
        overdue: [],
        stopping: false,
      };
      server = await startOpsServer({
        host: "127.0.0.1",
        port: 0,
        logger: memoryLogger().logger,
        metrics: new Metrics(),
        readiness: () => Promise.resolve(report),
      });
      const get = (path: string | undefined) =>
        fetch(`${server?.url ?? ""}${path ?? "/missing"}`);
      expect((await get(live?.path)).status).toBe(200);
      expect((await get(container.startupProbe?.httpGet?.path)).status).toBe(
        200,
      );
      expect((await get(ready?.path)).status).toBe(503);
      report = {
        ...report,
        ready: true,
        reasons: [],
        clickhouse: { ok: true },
      };
      expect((await get(ready?.path)).status).toBe(200);
    });

    it("serves the ops port through the Service and has Prometheus scrape /metrics there", async () => {
      const ops = opsPort(container);
      const podLabels = r.deployment.spec?.template.metadata?.labels ?? {};
      expect(podLabels).toMatchObject(
        r.service.spec?.selector ?? { missing: "selector" },
      );
      expect(podLabels).toMatchObject(
        r.deployment.spec?.selector.matchLabels ?? {},
      );
      const ports = r.service.spec?.ports ?? [];
      expect(ports).toHaveLength(1);
      expect(isOpsPort(ports[0]?.targetPort, ops)).toBe(true);
      expect(r.service.spec?.publishNotReadyAddresses).toBe(true);
      // The ServiceMonitor selects this Service and scrapes its port by name.
      expect(r.service.metadata?.labels ?? {}).toMatchObject(
        r.serviceMonitor.spec.selector.matchLabels ?? { missing: "selector" },
      );
      const endpoints = r.serviceMonitor.spec.endpoints ?? [];
      expect(endpoints.map((e) => e.port)).toEqual([ports[0]?.name]);
      const metrics = new Metrics();
      server = await startOpsServer({
        host: "127.0.0.1",
        port: 0,
        logger: memoryLogger().logger,
        metrics,
        readiness: () => Promise.reject(new Error("not asked")),
      });
      const answer = await fetch(
        `${server.url}${endpoints[0]?.path ?? "/missing"}`,
      );
      expect(answer.status).toBe(200);
      expect(answer.headers.get("content-type")).toBe(metrics.contentType);
    });

    it("has a disruption budget for the exporter's pod that lets a drain evict it", () => {
      const podLabels = r.deployment.spec?.template.metadata?.labels ?? {};
      expect(podLabels).toMatchObject(
        r.budget.spec?.selector?.matchLabels ?? { missing: "selector" },
      );
      expect(r.budget.spec?.maxUnavailable).toBe(1);
    });

    it("lets in the ops port only, and lets out DNS, the API and ClickHouse only", () => {
      const ops = opsPort(container);
      const spec = r.networkPolicy.spec;
      const podLabels = r.deployment.spec?.template.metadata?.labels ?? {};
      expect(podLabels).toMatchObject(
        spec?.podSelector?.matchLabels ?? { missing: "selector" },
      );
      expect(spec?.policyTypes).toEqual(
        expect.arrayContaining(["Ingress", "Egress"]),
      );
      for (const rule of spec?.ingress ?? []) {
        expect(
          rule.ports?.length,
          "an ingress rule without ports admits every port",
        ).toBeGreaterThan(0);
        for (const p of rule.ports ?? [])
          expect(isOpsPort(p.port, ops), String(p.port)).toBe(true);
      }
      const allowed = new Map<string, string>([
        ["UDP/53", "DNS"],
        ["TCP/53", "DNS"],
        [`TCP/${urlPort(config.api.url)}`, "the API"],
      ]);
      if (config.clickhouse.url !== undefined)
        allowed.set(`TCP/${urlPort(config.clickhouse.url)}`, "ClickHouse");
      const opened = new Set<string>();
      for (const rule of spec?.egress ?? []) {
        expect(
          rule.to?.length,
          "an egress rule without `to` reaches every address",
        ).toBeGreaterThan(0);
        expect(
          rule.ports?.length,
          "an egress rule without ports opens every port",
        ).toBeGreaterThan(0);
        for (const p of rule.ports ?? []) {
          const key = `${p.protocol ?? "TCP"}/${String(p.port)}`;
          expect(
            allowed.has(key),
            `egress to ${key}, which the exporter does not use`,
          ).toBe(true);
          opened.add(key);
        }
        for (const peer of rule.to ?? [])
          if (peer.ipBlock)
            expect(
              peer.ipBlock.except ?? [],
              "the public addresses only",
            ).toEqual(
              expect.arrayContaining([
                "10.0.0.0/8",
                "172.16.0.0/12",
                "192.168.0.0/16",
              ]),
            );
      }
      expect([...opened].sort()).toEqual([...allowed.keys()].sort());
    });

    it("runs the image the docs build, with the embedded engine where it is used", () => {
      const version = (
        JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as {
          version: string;
        }
      ).version;
      const image = documentedImages().get(buildArg);
      expect(
        image,
        `${DOCS} shows no docker build for ${buildArg || "the default image"}`,
      ).toBeDefined();
      expect(container.image).toBe(image);
      expect(image?.split(":")[1]?.startsWith(version)).toBe(true);
      const [name = "", value = ""] = buildArg.split("=");
      const [install = ""] = runtimeNpmCalls(buildArg ? { [name]: value } : {});
      expect(install).toMatch(/^ci --omit=dev\b/);
      // The image without the engine opens no data directory: CLICKHOUSE_URL must be set.
      expect(install.includes("--omit=optional")).toBe(
        config.clickhouse.url !== undefined,
      );
    });
  },
);
