// Reading a request the way ClickHouse's HTTP interface does: who is asking (headers, basic
// auth or URL parameters, never two of them at once), what the URL parameters mean (reserved
// names, param_<name> query parameters, the rest settings), and the body (decompressed
// per Content-Encoding, kept in memory while small and spooled to a file beyond that).
import { rm, type FileHandle } from "node:fs/promises";
import { openPrivateFile } from "../util/private-files.js";
import type { IncomingMessage } from "node:http";
import type { Transform } from "node:stream";
import zlib from "node:zlib";
import { blockFilePath } from "../warehouse/index.js";
import { FrontError } from "./errors.js";

export interface Credentials {
  user: string;
  password: string;
  /** An `Authorization: Bearer` token. */
  bearer?: string;
  /** Where the credentials came from, for messages. */
  from: string;
}

const authFailed = (message: string) =>
  new FrontError("AUTHENTICATION_FAILED", message);

/** The credentials of a request, by the server's rules for mixing the ways of giving them. */
export function credentialsOf(
  req: IncomingMessage,
  params: URLSearchParams,
): Credentials {
  const headerUser = header(req, "x-clickhouse-user") ?? "";
  const headerKey = header(req, "x-clickhouse-key") ?? "";
  const authorization = header(req, "authorization");
  const inParams = params.has("user") || params.has("password");
  if (headerUser !== "" || headerKey !== "") {
    if (authorization !== undefined)
      throw authFailed(
        "Invalid authentication: it is not allowed to use X-ClickHouse HTTP headers and Authorization HTTP header simultaneously",
      );
    if (inParams)
      throw authFailed(
        "Invalid authentication: it is not allowed to use X-ClickHouse HTTP headers and authentication via parameters simultaneously",
      );
    if (headerUser === "")
      throw authFailed("Got an empty user name from X-ClickHouse HTTP headers");
    return { user: headerUser, password: headerKey, from: "headers" };
  }
  if (authorization !== undefined) {
    if (inParams)
      throw authFailed(
        "Invalid authentication: it is not allowed to use Authorization HTTP header and authentication via parameters simultaneously",
      );
    const space = authorization.indexOf(" ");
    const scheme = space < 0 ? authorization : authorization.slice(0, space);
    const info = space < 0 ? "" : authorization.slice(space + 1).trim();
    if (scheme.toLowerCase() === "basic") {
      const decoded = Buffer.from(info, "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      const user = colon < 0 ? decoded : decoded.slice(0, colon);
      if (user === "")
        throw authFailed(
          "Got an empty user name from Authorization HTTP header",
        );
      return {
        user,
        password: colon < 0 ? "" : decoded.slice(colon + 1),
        from: "basic",
      };
    }
    if (scheme.toLowerCase() === "bearer") {
      return { user: "default", password: "", bearer: info, from: "bearer" };
    }
    throw authFailed(
      `Invalid authentication: '${scheme}' HTTP Authorization scheme is not supported`,
    );
  }
  const user = params.get("user") ?? "default";
  if (user === "")
    throw authFailed(
      "Got an empty user name from authentication via parameters",
    );
  return { user, password: params.get("password") ?? "", from: "parameters" };
}

export function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** URL parameters that are neither settings nor query parameters (the server's list). */
const RESERVED = new Set([
  "query",
  "database",
  "default_format",
  "compress",
  "decompress",
  "user",
  "password",
  "quota_key",
  "query_id",
  "stacktrace",
  "buffer_size",
  "wait_end_of_query",
  "session_id",
  "session_timeout",
  "session_check",
  "client_protocol_version",
  "close_session",
  "role",
]);

/**
 * Settings that steer the HTTP layer. The front implements the compression ones and has nothing
 * to do for the rest (it always answers after the whole result is known); none reaches the engine.
 */
const HTTP_SETTINGS = new Set([
  "enable_http_compression",
  "http_zlib_compression_level",
  "http_response_compression_method",
  "send_progress_in_http_headers",
  "http_headers_progress_interval_ms",
  "http_response_buffer_size",
  "http_wait_end_of_query",
  "http_write_exception_in_output_format",
  "add_http_cors_header",
  "cancel_http_readonly_queries_on_client_close",
  "http_native_compression_disable_checksumming_on_decompress",
]);

const NAME = /^[A-Za-z0-9_]+$/;

export interface RequestParams {
  database?: string;
  defaultFormat?: string;
  /** Settings for the engine, in URL order, names checked against NAME. */
  settings: Map<string, string>;
  /** Values of param_<name>, as sent (ClickHouse's escaped text format). */
  queryParams: Map<string, string>;
  /**
   * The settings of the HTTP layer that were given (HTTP_SETTINGS): the front acts on them
   * itself and none reaches the engine, but a readonly = 1 server refuses them as any other.
   */
  httpSettings: Map<string, string>;
  compression: { enabled: boolean; level: number };
}

const truthy = (v: string | null | undefined): boolean =>
  v !== null && v !== undefined && v !== "" && v !== "0" && v !== "false";

export function readParams(
  req: IncomingMessage,
  params: URLSearchParams,
): RequestParams {
  const out: RequestParams = {
    settings: new Map(),
    queryParams: new Map(),
    httpSettings: new Map(),
    compression: { enabled: false, level: 3 },
  };
  const database =
    header(req, "x-clickhouse-database") || params.get("database");
  if (database) out.database = database;
  const format =
    header(req, "x-clickhouse-format") || params.get("default_format");
  if (format) {
    if (!NAME.test(format))
      throw new FrontError("BAD_ARGUMENTS", `Invalid format name '${format}'`);
    out.defaultFormat = format;
  }
  if (truthy(params.get("compress")) || truthy(params.get("decompress")))
    throw new FrontError(
      "NOT_IMPLEMENTED",
      "ClickHouse's own compression of the body (compress=1, decompress=1) is not supported by this front; use Content-Encoding and enable_http_compression",
    );
  for (const [key, value] of params) {
    if (key === "" || RESERVED.has(key)) continue;
    if (key.startsWith("param_")) {
      const name = key.slice("param_".length);
      if (!NAME.test(name))
        throw new FrontError(
          "BAD_ARGUMENTS",
          `Invalid name of query parameter '${name}'`,
        );
      out.queryParams.set(name, value);
      continue;
    }
    if (HTTP_SETTINGS.has(key)) {
      out.httpSettings.set(key, value);
      if (key === "enable_http_compression")
        out.compression.enabled = truthy(value);
      const level = Number(value);
      if (
        key === "http_zlib_compression_level" &&
        Number.isInteger(level) &&
        level >= 1 &&
        level <= 9
      )
        out.compression.level = level;
      continue;
    }
    if (!NAME.test(key))
      throw new FrontError("UNKNOWN_SETTING", `Unknown setting '${key}'`);
    out.settings.set(key, value);
  }
  return out;
}

/** A request body: none, small and in memory, or spooled to a file. */
export type Body =
  | { kind: "none" }
  | { kind: "memory"; data: Buffer }
  | { kind: "file"; path: string; size: number };

export interface BodyLimits {
  /** Bodies larger than this (after decompression) are refused. */
  maxBytes: number;
  /** Bodies up to this stay in memory. */
  inlineBytes: number;
  /** Directory of spooled bodies. */
  tempDir: string;
}

function decoderFor(encoding: string | undefined): Transform | undefined {
  const e = (encoding ?? "").trim().toLowerCase();
  if (e === "" || e === "identity" || e === "none") return undefined;
  if (e === "gzip" || e === "x-gzip") return zlib.createGunzip();
  if (e === "deflate") return zlib.createInflate();
  if (e === "br") return zlib.createBrotliDecompress();
  const zstd = (zlib as unknown as { createZstdDecompress?: () => Transform })
    .createZstdDecompress;
  if (e === "zstd" && zstd) return zstd();
  throw new FrontError(
    "NOT_IMPLEMENTED",
    `Unsupported Content-Encoding '${e}': this front reads gzip, deflate and br${zstd ? " and zstd" : ""}`,
  );
}

/** The client closed the connection before its body was complete. */
class ClientGone extends Error {}

/**
 * Reads (and decompresses) the body; the caller removes a spooled file. A body that is too
 * large, or that does not decompress, is still read to its end (and dropped), as a server does,
 * so that the answer reaches the client and the connection stays usable.
 */
export async function readBody(
  req: IncomingMessage,
  limits: BodyLimits,
): Promise<Body> {
  const decoder = decoderFor(header(req, "content-encoding"));
  const source = decoded(req, decoder);
  const spool = new BodySpool(limits);
  try {
    // No throw inside the loop: leaving it early would destroy the request, and the socket.
    for await (const chunk of source) await spool.add(chunk);
    await spool.finish();
  } catch (err) {
    await spool.drop();
    throw readFailure(req, decoder, err);
  }
  return spool.body();
}

/** The body's bytes: the request itself, or the request through `decoder`. */
function decoded(
  req: IncomingMessage,
  decoder: Transform | undefined,
): AsyncIterable<Buffer> {
  if (!decoder) return req;
  // pipe() does not pass the request's end on to the decoder when the client goes away.
  req.once("close", () => {
    if (!req.complete) decoder.destroy(new ClientGone("client went away"));
  });
  return req.pipe(decoder);
}

/**
 * What a read that failed throws: its own error when the client went away or the body is not
 * compressed; otherwise CANNOT_DECOMPRESS, once the rest of the request is let through unread.
 */
function readFailure(
  req: IncomingMessage,
  decoder: Transform | undefined,
  err: unknown,
): unknown {
  const gone =
    err instanceof ClientGone ||
    (req.destroyed && !req.complete) ||
    ["ECONNRESET", "ECONNABORTED", "ERR_STREAM_PREMATURE_CLOSE"].includes(
      (err as NodeJS.ErrnoException).code ?? "",
    );
  if (gone || !decoder) return err;
  req.unpipe(decoder);
  req.resume();
  return new FrontError(
    "CANNOT_DECOMPRESS",
    `Cannot decompress the request body: ${(err as Error).message}`,
  );
}

/**
 * A body as it is read: held in memory up to `inlineBytes`, then written to a file in pieces;
 * beyond `maxBytes`, dropped, and the rest of it only counted.
 */
class BodySpool {
  #size = 0;
  #tooLarge = false;
  #held: Buffer[] = [];
  #heldBytes = 0;
  #file: FileHandle | undefined;
  #path: string | undefined;

  constructor(private readonly limits: BodyLimits) {}

  async add(chunk: Buffer): Promise<void> {
    if (this.#tooLarge) return;
    this.#size += chunk.length;
    if (this.#size > this.limits.maxBytes) {
      this.#tooLarge = true;
      this.#held = [];
      this.#heldBytes = 0;
      await this.drop();
      return;
    }
    this.#held.push(chunk);
    this.#heldBytes += chunk.length;
    if (!this.#file && this.#size > this.limits.inlineBytes) {
      this.#path = blockFilePath(this.limits.tempDir);
      this.#file = await openPrivateFile(this.#path);
    }
    // Into the file in pieces of a megabyte or more, not chunk by chunk.
    if (this.#file && this.#heldBytes >= 1 << 20) await this.#writeHeld();
  }

  /** Writes what is still held to the file, if there is one, and closes it. */
  async finish(): Promise<void> {
    if (this.#file && this.#heldBytes > 0) await this.#writeHeld();
    await this.#file?.close();
  }

  /** Closes and removes the file, if there is one. */
  async drop(): Promise<void> {
    await this.#file?.close();
    this.#file = undefined;
    if (this.#path) await rm(this.#path, { force: true });
    this.#path = undefined;
  }

  /** The body read; QUERY_IS_TOO_LARGE when it went beyond `maxBytes`. */
  body(): Body {
    if (this.#tooLarge)
      throw new FrontError(
        "QUERY_IS_TOO_LARGE",
        `Request body is too large: more than ${this.limits.maxBytes} bytes`,
      );
    if (this.#path) return { kind: "file", path: this.#path, size: this.#size };
    if (this.#size === 0) return { kind: "none" };
    return {
      kind: "memory",
      data: Buffer.concat(this.#held, this.#heldBytes),
    };
  }

  /** One write of the held chunks as they are (no copy into one buffer first). */
  async #writeHeld(): Promise<void> {
    await this.#file?.writev(this.#held);
    this.#held = [];
    this.#heldBytes = 0;
  }
}
