// Small real HTTP servers for fault tests: a scripted Connect endpoint that records when each
// request arrived, a proxy in front of the simulator that records the same (to check the
// request-rate ceiling from the outside), optionally terminating TLS with a test certificate,
// and a proxy that answers the requests a test picks with a Connect error.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  createServer as createHttpsServer,
  type Server as HttpsServer,
} from "node:https";
import {
  createServer,
  request,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { testTmpDir } from "./run-tmp.js";

export interface Recorded {
  /** performance.now() at arrival: the client runs in this process, so the clocks agree. */
  at: number;
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
}

export interface TestServer {
  url: string;
  requests: Recorded[];
  close(): Promise<void>;
}

async function listen(server: Server | HttpsServer): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function closer(server: Server | HttpsServer): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
}

export type Script = (n: number, req: Recorded, res: ServerResponse) => void;

/** A server answering request n (0-based) with `script(n, …)`. */
export async function scriptedServer(script: Script): Promise<TestServer> {
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    const at = performance.now();
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const rec: Recorded = {
        at,
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      requests.push(rec);
      script(requests.length - 1, rec, res);
    });
  });
  return { url: await listen(server), requests, close: closer(server) };
}

export function connectError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ code, message }));
}

export function ok(
  res: ServerResponse,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(200, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/** A pass-through proxy to `target` that records every request it forwards. */
export async function recordingProxy(
  target: string,
  tls?: { key: Buffer; cert: Buffer },
): Promise<TestServer> {
  const requests: Recorded[] = [];
  const upstream = new URL(target);
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    requests.push({
      at: performance.now(),
      path: req.url ?? "",
      headers: req.headers,
      body: "",
    });
    const out = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        answer.on("error", () => res.destroy());
      },
    );
    out.on("error", () => res.destroy());
    req.pipe(out);
  };
  // With a certificate it terminates TLS in front of a plain-HTTP upstream (the simulator).
  const server = tls ? createHttpsServer(tls, handler) : createServer(handler);
  const url = await listen(server);
  return {
    url: tls ? url.replace("http:", "https:") : url,
    requests,
    close: closer(server),
  };
}

export interface GatedProxy {
  url: string;
  /** Lets the held requests and every later one through. */
  open(): void;
  close(): Promise<void>;
}

/**
 * A pass-through proxy to `target` that holds every request until `open()`: a client of it
 * stays in the middle of its work, however fast or slow the machine, until the test lets it on.
 */
export async function gatedProxy(target: string): Promise<GatedProxy> {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    void opened.then(() => {
      const out = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: req.headers,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          answer.on("error", () => res.destroy());
        },
      );
      out.on("error", () => res.destroy());
      req.pipe(out);
    });
  });
  return { url: await listen(server), open, close: closer(server) };
}

/** The most requests that arrived within any `windowMs` (a sliding window over arrivals). */
export function maxInWindow(
  arrivals: readonly number[],
  windowMs: number,
): number {
  const t = [...arrivals].sort((a, b) => a - b);
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < t.length; hi++) {
    while ((t[hi] as number) - (t[lo] as number) >= windowMs) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

export const hasOpenssl = (() => {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

/** A private CA and a server certificate for 127.0.0.1 signed by it. */
export function makeCertificates(): {
  caFile: string;
  key: Buffer;
  cert: Buffer;
} {
  const dir = mkdtempSync(join(testTmpDir(), "sessionhouse-tls-"));
  const run = (args: string[]) =>
    execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  run([
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "2",
    "-subj",
    "/CN=sessionhouse test CA",
  ]);
  run([
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "server.key",
    "-out",
    "server.csr",
    "-subj",
    "/CN=127.0.0.1",
  ]);
  writeFileSync(
    join(dir, "ext.cnf"),
    "subjectAltName=IP:127.0.0.1,DNS:localhost\n",
  );
  run([
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "server.pem",
    "-days",
    "2",
    "-extfile",
    "ext.cnf",
  ]);
  return {
    caFile: join(dir, "ca.pem"),
    key: readFileSync(join(dir, "server.key")),
    cert: readFileSync(join(dir, "server.pem")),
  };
}

/** A Connect error a refusing proxy answers with. */
export interface Refusal {
  status: number;
  code: string;
  message: string;
}

/**
 * A proxy to `target` that answers each request `refuse(path, body)` returns a refusal for with
 * that Connect error, and forwards every other one.
 */
export async function refusingProxy(
  target: string,
  refuse: (path: string, body: string) => Refusal | undefined,
): Promise<TestServer> {
  const requests: Recorded[] = [];
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    const at = performance.now();
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const path = req.url ?? "";
      requests.push({ at, path, headers: req.headers, body: body.toString() });
      const refusal = refuse(path, body.toString("utf8"));
      if (refusal) {
        connectError(res, refusal.status, refusal.code, refusal.message);
        return;
      }
      const out = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path,
          headers: req.headers,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          answer.on("error", () => res.destroy());
        },
      );
      out.on("error", () => res.destroy());
      out.end(body);
    });
  });
  return { url: await listen(server), requests, close: closer(server) };
}
