// The HTTP front's entry: a ClickHouse HTTP interface served by the embedded engine (server.ts),
// and the read access of `sessionhouse run` built on it (read-access.ts). Code outside
// src/http-front/ imports from here only.
export { startHttpFront, type HttpFront } from "./server.js";
export {
  newReadToken,
  startReadAccess,
  type ReadAccess,
} from "./read-access.js";
