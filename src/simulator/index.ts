// Public surface of the control-plane simulator: the server, its building blocks (org,
// session generator, wire encoder, clock, faults) and the parsers the CLI calls.

export * from "./model.js";
export { SimClock, parseClockSpec } from "./clock.js";
export { SimConnectError, parseRequestTimestamp } from "./connect.js";
export {
  CLASSIC_FAULT_KINDS,
  FaultInjector,
  WIRE_FAULT_KINDS,
  parseFaultSpec,
  type BadDatesVariant,
  type BrokenRecord,
  type BrokenRecordKind,
  type FaultedRecord,
  type FaultKind,
  type FaultOptions,
} from "./faults.js";
export {
  MUTATION_KINDS,
  parseMutationSpec,
  type MutationKind,
  type ServedRecord,
} from "./mutations.js";
export { INVALID_UTF8, PADDING_MEMBER } from "./wire-faults.js";
export { SUSPENSION_MODEL } from "./directory.js";
export { buildOrg, indexOrg, parseOrgSize } from "./org.js";
export { createRng, hash32 } from "./random.js";
export {
  TRAFFIC_MODEL,
  activityOf,
  createSessionGenerator,
  homeIpOf,
  statusAt,
  weightsAt,
} from "./sessions.js";
export {
  LIST_LOG_AGGREGATIONS_PATH,
  LIST_SESSIONS_PATH,
  RawJson,
  startSimulator,
  type RouteContext,
  type RouteHandler,
  type Simulator,
  type SimulatorOptions,
} from "./server.js";
export { WRONG_LIST_MEMBER } from "./list-sessions.js";
export { formatDuration, formatTimestamp, parseRfc3339 } from "./time.js";
export { DEFAULT_BRAND_MEMBER, sessionToWire, wireEncoder } from "./wire.js";
export { parseLatencySpec } from "./latency.js";
