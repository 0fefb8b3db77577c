#!/usr/bin/env python3
"""An independent reader of lsb.events, written from event-log.md alone (stdlib only).

For every record line it prints one JSON object: line number, type, version, number of
fields, the job id (for job records), and for JOB_NEW/JOB_MODIFY the job name and command.
The Rust test compares this with what basalt-eventlog wrote.
"""

import json
import sys


def tokenize(line):
    """Split a record line: quoted strings (with "" meaning one quote) and bare tokens,
    separated by runs of spaces."""
    fields = []
    i, n = 0, len(line)
    while True:
        while i < n and line[i] in " \t":
            i += 1
        if i >= n:
            return fields
        if line[i] == '"':
            i += 1
            parts = []
            while True:
                j = line.find('"', i)
                if j < 0:
                    raise ValueError("unterminated string")
                parts.append(line[i:j])
                if j + 1 < n and line[j + 1] == '"':
                    parts.append('"')
                    i = j + 2
                    continue
                i = j + 1
                break
            fields.append(("str", "".join(parts)))
        else:
            j = i
            while j < n and line[j] not in " \t":
                j += 1
            fields.append(("num", line[i:j]))
            i = j


# 0-based index of jobId in the field list (index 0 is the type).
JOB_ID_AT = {
    "JOB_NEW": 3, "JOB_MODIFY": 3, "JOB_START": 3, "PRE_EXEC_START": 3,
    "JOB_START_ACCEPT": 3, "JOB_EXECUTE": 3, "JOB_STATUS": 3, "JOB_SIGNAL": 3,
    "JOB_REQUEUE": 3, "JOB_CLEAN": 3, "JOB_FORCE": 3, "JOB_SIGACT": 3, "JOB_FINISH": 3,
    "JOB_SWITCH": 4, "JOB_MOVE": 4,
}


def main(path):
    with open(path, encoding="utf-8", newline="\n") as f:
        for lineno, raw in enumerate(f, 1):
            if not raw.endswith("\n"):
                break  # an incomplete last line
            line = raw[:-1]
            if line.startswith("#") or not line.strip():
                continue
            fields = tokenize(line)
            kind = fields[0][1]
            out = {
                "line": lineno,
                "type": kind,
                "version": fields[1][1],
                "nfields": len(fields),
            }
            if kind in JOB_ID_AT:
                out["job_id"] = int(fields[JOB_ID_AT[kind]][1])
            if kind in ("JOB_NEW", "JOB_MODIFY"):
                # $39 numAskedHosts, then the hosts, "dependCond" "preExecCmd" "jobName" "command".
                asked = int(fields[38][1])
                out["job_name"] = fields[41 + asked][1]
                out["command"] = fields[42 + asked][1]
            print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
