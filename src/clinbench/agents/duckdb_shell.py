"""The ``duckdb`` command of the agent toolbox: a DuckDB shell run by Python's ``duckdb`` module.

Runs INSIDE the sandbox (standard library + ``duckdb`` only), so its database format is the
harness's own. It takes the common forms of the DuckDB CLI::

    duckdb FILE -c "SELECT ..."          duckdb -csv FILE "SELECT ..."
    duckdb FILE < script.sql             echo ".tables" | duckdb FILE

Options: ``-c``/``-s SQL``, ``-cmd SQL``, output modes ``-csv -json -jsonlines -line -list -markdown
-box -duckbox -table``, ``-header``/``-noheader``, ``-separator SEP``, ``-nullvalue TEXT``,
``-readonly`` (the default for an existing file), ``-readwrite``, ``-version``. Dot commands:
``.tables``, ``.schema [TABLE]``, ``.mode MODE``, ``.headers on|off``, ``.read FILE``, ``.quit``.
An error prints ``Error: ...`` on stderr and the exit status is 1.
"""

import csv
import json
import os
import sys

import duckdb

MODES = ("csv", "json", "jsonlines", "line", "list", "markdown", "box", "duckbox", "table", "tabs")
USAGE = "usage: duckdb [OPTIONS] [FILENAME [SQL]]  (try -help)"


class Shell:
    def __init__(self, path, read_only):
        self.con = duckdb.connect(path, read_only=read_only) if path else duckdb.connect()
        self.mode, self.header, self.sep, self.null = "duckbox", True, None, ""
        self.failed = False

    # -- output ----------------------------------------------------------------------
    def show(self, names, rows):
        out = sys.stdout
        cells = [["" if v is None and self.mode in ("csv", "list", "tabs") else self.null if v is None else str(v)
                  for v in r] for r in rows]
        if self.mode in ("csv", "list", "tabs"):
            sep = self.sep or {"csv": ",", "list": "|", "tabs": "\t"}[self.mode]
            w = csv.writer(out, delimiter=sep, lineterminator="\n") if self.mode == "csv" else None
            if self.header:
                w.writerow(names) if w else out.write(sep.join(names) + "\n")
            for r in cells:
                w.writerow(r) if w else out.write(sep.join(r) + "\n")
        elif self.mode in ("json", "jsonlines"):
            objs = [dict(zip(names, (_jsonable(v) for v in r))) for r in rows]
            if self.mode == "json":
                out.write(json.dumps(objs, indent=None) + "\n")
            else:
                out.writelines(json.dumps(o) + "\n" for o in objs)
        elif self.mode == "line":
            width = max((len(n) for n in names), default=0)
            for r in cells:
                out.writelines(f"{n.rjust(width)} = {v}\n" for n, v in zip(names, r))
                out.write("\n")
        else:  # markdown / box / duckbox / table
            widths = [max([len(n)] + [len(r[i]) for r in cells]) for i, n in enumerate(names)]
            def line(values):
                return "| " + " | ".join(v.ljust(w) for v, w in zip(values, widths)) + " |\n"
            rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+\n"
            if self.mode == "markdown":
                out.write(line(names) + "|" + "|".join("-" * (w + 2) for w in widths) + "|\n")
                out.writelines(line(r) for r in cells)
            else:
                out.write(rule + line(names) + rule)
                out.writelines(line(r) for r in cells)
                out.write(rule + f"{len(rows)} rows\n" if self.mode == "duckbox" else rule)

    # -- input -----------------------------------------------------------------------
    def sql(self, text):
        if not text.strip():
            return
        try:
            statements = duckdb.extract_statements(text)
        except duckdb.Error as exc:
            return self.error(exc)
        for statement in statements:
            try:
                cur = self.con.execute(statement.query)
                # like the DuckDB CLI, a CREATE/INSERT/COPY prints no row count
                quiet = statement.type not in (duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN,
                                               duckdb.StatementType.PRAGMA, duckdb.StatementType.CALL)
                if cur.description and not (quiet and [d[0] for d in cur.description] == ["Count"]):
                    self.show([d[0] for d in cur.description], cur.fetchall())
            except duckdb.Error as exc:
                return self.error(exc)

    def error(self, exc):
        sys.stderr.write(f"Error: {str(exc).strip()}\n")
        self.failed = True

    def dot(self, line):
        parts = line.split()
        cmd, args = parts[0], parts[1:]
        if cmd in (".quit", ".exit"):
            raise SystemExit(1 if self.failed else 0)
        if cmd == ".tables":
            rows = self.con.execute("SELECT table_schema || '.' || table_name FROM information_schema.tables "
                                    "WHERE table_schema NOT IN ('information_schema', 'pg_catalog') ORDER BY 1").fetchall()
            sys.stdout.writelines(r[0] + "\n" for r in rows)
        elif cmd == ".schema":
            where = "WHERE table_name = ? OR schema_name || '.' || table_name = ?" if args else ""
            rows = self.con.execute(f"SELECT sql FROM duckdb_tables() {where} ORDER BY schema_name, table_name",
                                    [args[0], args[0]] if args else []).fetchall()
            sys.stdout.writelines(f"{r[0]}\n" for r in rows)
        elif cmd == ".mode" and args:
            self.mode = args[0] if args[0] in MODES else self.error(f"unknown mode {args[0]}") or self.mode
        elif cmd in (".headers", ".header") and args:
            self.header = args[0].lower() in ("on", "1", "yes", "true")
        elif cmd == ".read" and args:
            self.script(open(args[0], encoding="utf-8").read())
        elif cmd in (".timer", ".echo", ".bail", ".changes", ".maxrows", ".width"):
            pass
        else:
            self.error(f"unknown or unsupported command {cmd!r}")

    def script(self, text):
        """Lines starting with '.' are dot commands; everything between them is SQL."""
        buf = []
        for line in text.splitlines():
            if line.lstrip().startswith(".") and not "".join(buf).strip():
                self.dot(line.strip())
            else:
                buf.append(line)
                if line.rstrip().endswith(";"):
                    self.sql("\n".join(buf))
                    buf = []
        self.sql("\n".join(buf))


def _jsonable(value):
    return value if isinstance(value, (int, float, str, bool)) or value is None else str(value)


def main(argv):
    path, sql, cmds, mode, header, sep, null = None, [], [], None, None, None, None
    read_only = None
    i = 0
    while i < len(argv):
        arg = argv[i]
        flag = arg.lstrip("-") if arg.startswith("-") and len(arg) > 1 else None
        if flag in ("c", "s"):
            i += 1
            sql.append(argv[i])
        elif flag == "cmd":
            i += 1
            cmds.append(argv[i])
        elif flag in MODES:
            mode = flag
        elif flag in ("header", "noheader"):
            header = flag == "header"
        elif flag == "separator":
            i += 1
            sep = argv[i]
        elif flag == "nullvalue":
            i += 1
            null = argv[i]
        elif flag == "readonly":
            read_only = True
        elif flag == "readwrite":
            read_only = False
        elif flag == "version":
            print(f"v{duckdb.__version__} (clinbench toolbox shell)")
            return 0
        elif flag in ("help", "h"):
            print(__doc__)
            return 0
        elif flag in ("batch", "bail", "no-stdin", "echo", "unsigned", "safe"):
            pass
        elif flag is not None:
            sys.stderr.write(f"Error: unknown option {arg}\n{USAGE}\n")
            return 1
        elif path is None:
            path = arg
        else:
            sql.append(arg)
        i += 1
    if read_only is None:
        read_only = bool(path) and os.path.exists(path)
    try:
        shell = Shell(path, read_only)
    except duckdb.Error as exc:
        sys.stderr.write(f"Error: unable to open database {path!r}: {str(exc).strip()}\n")
        return 1
    if mode:
        shell.mode = mode
    if header is not None:
        shell.header = header
    shell.sep, shell.null = sep, null if null is not None else "NULL"
    for c in cmds:
        shell.script(c)
    if sql:
        for s in sql:
            shell.script(s)
    elif not sys.stdin.isatty():
        shell.script(sys.stdin.read())
    else:
        sys.stderr.write(f"{USAGE}\n")
    sys.stdout.flush()
    return 1 if shell.failed else 0


if __name__ == "__main__":
    try:
        code = main(sys.argv[1:])
    except SystemExit as done:
        code = done.code
    except (OSError, IndexError) as exc:
        sys.stderr.write(f"Error: {exc}\n")
        code = 1
    sys.exit(code)
