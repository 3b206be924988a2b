// Public surface of the control-plane simulator: the server, its building blocks (org,
// session generator, wire encoder, clock, faults) and the parsers the CLI calls.

export * from "./model.js";
export {
  SimClock,
  parseClockSpec,
  type ClockMode,
  type SimClockOptions,
} from "./clock.js";
export {
  SimConnectError,
  parseRequestTimestamp,
  truncateForMessage,
} from "./connect.js";
export {
  BAD_DATES_VARIANTS,
  BROKEN_WINDOW_VARIANTS,
  CLASSIC_FAULT_KINDS,
  DEFAULT_HUGE_RECORD_BYTES,
  DEFAULT_LATE_MS,
  DEFAULT_SLOW_MS,
  FAULT_KINDS,
  FaultInjector,
  WIRE_FAULT_KINDS,
  isBrokenRecordKind,
  kebabCase,
  parseFaultSpec,
  type BadDatesVariant,
  type BrokenRecord,
  type BrokenRecordKind,
  type BrokenWindow,
  type BrokenWindowVariant,
  type FaultedRecord,
  type FaultedRecordKind,
  type FaultedSession,
  type FaultKind,
  type FaultOptions,
  type RequestFaults,
  type ResponseFault,
  type SessionFaultKind,
} from "./faults.js";
export {
  CORRECTION_DELAY_MS,
  MUTATION_KINDS,
  Mutator,
  parseMutationSpec,
  type AggregationAnswer,
  type MutationKind,
  type MutationOptions,
  type MutationStream,
  type ServedRecord,
} from "./mutations.js";
export {
  INVALID_UTF8,
  PADDING_MEMBER,
  brokenWindowAnswer,
  withStringCounts,
  withoutAggregations,
} from "./wire-faults.js";
export {
  ORG_SIZE_PRESETS,
  buildOrg,
  indexOrg,
  parseOrgSize,
  resolveOrgSize,
  type OrgDimensions,
  type OrgIndex,
  type OrgSize,
} from "./org.js";
export {
  Rng,
  WeightedTable,
  createRng,
  hash32,
  hashId,
  hashUnit,
  pick,
  uniformInt,
  weightedPick,
} from "./random.js";
export {
  DEFAULT_MAX_DURATION_MS,
  DEFAULT_SESSIONS_PER_DAY,
  compareSessions,
  createSessionGenerator,
  hourOf,
  statusAt,
  type SessionGenerator,
  type SessionGeneratorOptions,
} from "./sessions.js";
export {
  GET_SESSION_PATH,
  LIST_LOG_AGGREGATIONS_PATH,
  LIST_SESSIONS_PATH,
  RawJson,
  startSimulator,
  type RouteContext,
  type RouteHandler,
  type SimLogEntry,
  type SimLogger,
  type Simulator,
  type SimulatorOptions,
  type SimulatorStats,
} from "./server.js";
export {
  MAX_SESSIONS_LIMIT,
  WRONG_LIST_MEMBER,
  type CountMeans,
} from "./list-sessions.js";
export { decodeCursor, encodeCursor, type CursorPosition } from "./cursor.js";
export {
  DAY_MS,
  HOUR_MS,
  formatDuration,
  formatTimestamp,
  parseRfc3339,
} from "./time.js";
export {
  DEFAULT_BRAND_MEMBER,
  WireEncoder,
  sessionToWire,
  sessionToWireJson,
  wireEncoder,
  type WireBrandIdentities,
  type WireIdentity,
  type WireSession,
  type WireSessionUser,
} from "./wire.js";
export {
  ConcurrencyGate,
  parseLatencySpec,
  sendPaced,
  type LatencyOptions,
} from "./latency.js";
