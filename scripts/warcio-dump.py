"""Prints what warcio reads from WARC files, as one JSON document, for the tests to compare.

For each file: its gzip members (counted with zlib, independently of warcio) and its records, each
with its WARC fields, whether its digests verified, its HTTP status line and headers, and its
payload (in hex) as stored and, for gzip, deflate and uncoded bodies, decoded.
"""

import json
import sys
import zlib

from warcio.archiveiterator import ArchiveIterator


def gzip_members(path):
    """The number of gzip members in the file, read with zlib alone."""
    with open(path, "rb") as f:
        data = f.read()
    members = 0
    while data:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        inflater.decompress(data)
        if not inflater.eof:
            raise ValueError(f"{path}: a gzip member is cut short")
        members += 1
        data = inflater.unused_data
    return members


def decode(payload, coding):
    """The payload without its content coding, as far as it goes (a cut body decodes partly)."""
    coding = (coding or "identity").strip().lower()
    try:
        if coding == "identity":
            return payload
        if coding in ("gzip", "x-gzip"):
            return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(payload)
        if coding == "deflate":
            return zlib.decompressobj().decompress(payload)
    except zlib.error:
        pass  # not what the header says it is: no decoded payload
    return None


def hexed(data):
    return None if data is None else data.hex()


def record_json(record):
    fields = record.rec_headers
    entry = {
        "type": record.rec_type,
        "fields": [[name, value] for name, value in fields.headers],
        "digests_present": bool(fields.get_header("WARC-Block-Digest")),
    }
    http = record.http_headers
    payload = record.raw_stream.read()
    entry["digest_passed"] = record.digest_checker.passed
    entry["digest_problems"] = list(record.digest_checker.problems)
    if http is not None:
        entry["status_line"] = http.protocol + " " + http.statusline
        entry["http_headers"] = [[name, value] for name, value in http.headers]
        if record.rec_type == "response":
            entry["payload"] = hexed(payload)
            entry["decoded"] = hexed(decode(payload, http.get_header("Content-Encoding")))
    return entry


def main(paths):
    files = []
    for path in paths:
        with open(path, "rb") as stream:
            records = [record_json(r) for r in ArchiveIterator(stream, check_digests=True)]
        files.append({"path": path, "gzip_members": gzip_members(path), "records": records})
    json.dump({"files": files}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
