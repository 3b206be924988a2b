// The operations endpoint (node:http): /healthz, /readyz, /metrics. Bound to 127.0.0.1 unless
// configured otherwise, since it answers without authentication. Port 0 takes a free port (the
// log line "ops server listening" says which). Small bounds on connections and request time:
// nothing here should ever hold the process.
import {
  createServer,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "../util/logger.js";
import { errorMessage } from "../util/errors.js";
import type { ReadinessReport } from "./readiness.js";

interface OpsServerOptions {
  host: string;
  port: number;
  logger: Logger;
  metrics: { text(): Promise<string>; readonly contentType: string };
  readiness: () => Promise<ReadinessReport>;
  /** Applied to every body that carries error text (readiness reasons); redacts secrets. */
  scrub?: (text: string) => string;
}

export interface OpsServer {
  readonly url: string;
  readonly port: number;
  /** Stops listening and drops open connections; safe to call more than once. */
  close(): Promise<void>;
}

const MAX_CONNECTIONS = 32;
const REQUEST_TIMEOUT_MS = 15_000;

export async function startOpsServer(
  options: OpsServerOptions,
): Promise<OpsServer> {
  const scrub = options.scrub ?? ((t: string) => t);
  const server = createServer(
    {
      requestTimeout: REQUEST_TIMEOUT_MS,
      headersTimeout: REQUEST_TIMEOUT_MS,
      keepAliveTimeout: 5_000,
    },
    (req, res) => {
      handle(req, res, options, scrub).catch((err: unknown) => {
        options.logger.error(
          { err: errorMessage(err), path: req.url },
          "ops request failed",
        );
        if (!res.headersSent)
          send(res, 500, "text/plain; charset=utf-8", "internal error\n");
        else res.destroy();
      });
    },
  );
  server.maxConnections = MAX_CONNECTIONS;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  // An error after listen (rare: EMFILE on accept) must not crash the exporter.
  server.on("error", (err) =>
    options.logger.error({ err: errorMessage(err) }, "ops server error"),
  );
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  const url = `http://${host}:${port}`;
  options.logger.info(
    { url, host: options.host, port },
    "ops server listening",
  );
  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  options: OpsServerOptions,
  scrub: (text: string) => string,
): Promise<void> {
  // Request bodies are never read; drain them so the connection stays usable.
  req.resume();
  const path = (req.url ?? "/").split("?")[0];
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.setHeader("allow", "GET, HEAD");
    send(res, 405, "text/plain; charset=utf-8", "method not allowed\n");
    return;
  }
  switch (path) {
    case "/healthz":
      send(
        res,
        200,
        "application/json",
        `${JSON.stringify({ status: "ok" })}\n`,
      );
      return;
    case "/readyz": {
      const report = await options.readiness();
      send(
        res,
        report.ready ? 200 : 503,
        "application/json",
        scrub(`${JSON.stringify(report)}\n`),
      );
      return;
    }
    case "/metrics":
      send(res, 200, options.metrics.contentType, await options.metrics.text());
      return;
    default:
      send(
        res,
        404,
        "text/plain; charset=utf-8",
        "not found: try /healthz, /readyz or /metrics\n",
      );
  }
}

function send(
  res: ServerResponse,
  status: number,
  contentType: string,
  body: string,
): void {
  res.writeHead(status, {
    "content-type": contentType,
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
  });
  res.end(res.req.method === "HEAD" ? undefined : body);
}
