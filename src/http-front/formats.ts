// How an answer is written: the Content-Type ClickHouse's output formats declare for an HTTP
// answer (each format's getContentType), for the formats clients use (any other format is
// text/plain), and the response's compression.
import { promisify } from "node:util";
import zlib from "node:zlib";

const BINARY = new Set([
  "native",
  "parquet",
  "arrow",
  "arrowstream",
  "orc",
  "avro",
  "protobuf",
  "protobufsingle",
  "protobuflist",
  "capnproto",
  "msgpack",
  "bsoneachrow",
  "npy",
]);

const NDJSON = new Set(["jsoneachrow", "jsonlines", "ndjson"]);

export function contentTypeOf(format: string): string {
  const f = format.toLowerCase();
  if (f.startsWith("tabseparated") || f.startsWith("tsv"))
    return "text/tab-separated-values; charset=UTF-8";
  if (f === "csv") return "text/csv; charset=UTF-8; header=absent";
  if (f.startsWith("csvwith")) return "text/csv; charset=UTF-8; header=present";
  if (NDJSON.has(f)) return "application/x-ndjson; charset=UTF-8";
  if (f.startsWith("json")) return "application/json; charset=UTF-8";
  if (f === "xml") return "application/xml; charset=UTF-8";
  if (BINARY.has(f) || f.startsWith("rowbinary"))
    return "application/octet-stream";
  return "text/plain; charset=UTF-8";
}

/** The response encoding for an Accept-Encoding header, in the server's order of preference. */
export function chooseEncoding(accept: string | undefined): string | undefined {
  if (!accept) return undefined;
  const offered = new Set(
    accept.split(",").map((s) => (s.split(";")[0] ?? "").trim().toLowerCase()),
  );
  return ["gzip", "deflate", "br"].find((e) => offered.has(e));
}

const gzip = promisify(zlib.gzip);
const deflate = promisify(zlib.deflate);
const brotli = promisify(zlib.brotliCompress);

export function compress(
  encoding: string,
  data: Buffer,
  level: number,
): Promise<Buffer> {
  if (encoding === "gzip") return gzip(data, { level });
  if (encoding === "deflate") return deflate(data, { level });
  return brotli(data, {
    params: { [zlib.constants.BROTLI_PARAM_QUALITY]: level },
  });
}
