// Serves the embedded engine's data directory over ClickHouse's HTTP interface until SIGINT or
// SIGTERM, and prints `CLICKHOUSE_URL=<url>` on its first line of output, e.g. for CI:
//
//   npm run build && node scripts/http-front.mjs > front.env &
//
// Environment: HTTP_FRONT_DATA_DIR (default a new temporary directory), HTTP_FRONT_HOST
// (127.0.0.1), HTTP_FRONT_PORT (0: a free port), HTTP_FRONT_READONLY=1, HTTP_FRONT_USER and
// HTTP_FRONT_PASSWORD, or HTTP_FRONT_TOKEN. Uses the build in dist/.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startHttpFront } from "../dist/http-front/index.js";

const env = process.env;
const auth = env.HTTP_FRONT_TOKEN
  ? { token: env.HTTP_FRONT_TOKEN }
  : env.HTTP_FRONT_USER
    ? { user: env.HTTP_FRONT_USER, password: env.HTTP_FRONT_PASSWORD ?? "" }
    : undefined;
const front = await startHttpFront({
  path:
    env.HTTP_FRONT_DATA_DIR ??
    mkdtempSync(join(tmpdir(), "sessionhouse-front-")),
  host: env.HTTP_FRONT_HOST ?? "127.0.0.1",
  port: Number(env.HTTP_FRONT_PORT ?? 0),
  readonly: env.HTTP_FRONT_READONLY === "1",
  ...(auth ? { auth } : {}),
});
console.log(`CLICKHOUSE_URL=${front.url}`);
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, () => {
    void front.close().then(() => process.exit(0));
  });
}
