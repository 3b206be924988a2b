import { SessionhouseError } from "../util/errors.js";

/** A failure of ClickHouse (server or embedded), wrapping its own error as `cause`. */
export class SinkError extends SessionhouseError {
  readonly code: string;
  constructor(
    code: string,
    message: string,
    options?: { cause?: unknown; hint?: string },
  ) {
    super(message, options);
    this.code = code;
  }
}
