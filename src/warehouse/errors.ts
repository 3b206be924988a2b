import { FatalError } from "../util/errors.js";

/** A failure of ClickHouse (server or embedded), wrapping its own error as `cause`. */
export class SinkError extends FatalError {}
