"""
Routing cases as files: JSON Lines (one {"utterance", "currentMode", "expected"} per line) or CSV (a header row naming
those columns; currentMode may be left out). An import stores every case of the file or none: the problems name each
line and field. A case whose utterance and current mode a stored case has is a problem, or with update, a change.
"""

import csv
import io
import json

from django.conf import settings
from django.db import transaction

from aptix_site.text import json_problem, refuse_duplicate_keys, unstorable_text

from ..models import CatalogHead, RoutingCase
from .cases import FIELDS, MAX_STORED, InvalidRoutingCase, case_problems, mode_keys

FILE_FORMATS = ("jsonl", "csv")
MAX_PROBLEMS = 100  # a file past this many problems needs fixing at its source, not reading on


def export_cases(*, file_format: str) -> str:
    rows = [{name: getattr(case, field) for name, field in FIELDS.items()} for case in RoutingCase.objects.all()]
    if file_format == "jsonl":
        return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(FIELDS), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def import_cases(*, text: str, file_format: str, update: bool = False, dry_run: bool = False) -> dict:
    """{"created": n, "updated": n, "unchanged": n}; InvalidRoutingCase listing every problem, nothing stored."""
    if len(text.encode("utf-8", "surrogatepass")) > settings.API_MAX_IMPORT_BYTES:
        raise InvalidRoutingCase([f"The file is larger than the {settings.API_MAX_IMPORT_BYTES:,} bytes an import takes."])
    entries, problems = read_cases(text, file_format=file_format)
    keys, counts, to_save = mode_keys(), {"created": 0, "updated": 0, "unchanged": 0}, []
    with transaction.atomic():
        # The catalog's lock, for the bound (cases.room_problems); the rows' own locks keep one it updates from being
        # deleted (and saved back).
        CatalogHead.locked()
        stored = {(case.utterance, case.current_mode): case for case in RoutingCase.objects.select_for_update()}
        seen = {}
        for where, fields in entries:
            case = RoutingCase(**fields)
            identity = (case.utterance, case.current_mode)
            if identity in seen:
                problems.append(f"{where}: this utterance from this mode is given again, first at {seen[identity]}.")
                continue
            seen[identity] = where
            existing = stored.get(identity)
            if existing is not None and not update:
                problems.append(
                    f"{where}: a case with this utterance from this mode exists; import with update on (--update) to "
                    "change it."
                )
                continue
            problems += [f"{where}: {problem}" for problem in case_problems(case, keys=keys, unique=False)]
            if existing is None:
                counts["created"] += 1
                to_save.append(case)
            elif existing.expected != case.expected:
                counts["updated"] += 1
                existing.expected = case.expected
                to_save.append(existing)
            else:
                counts["unchanged"] += 1
        if len(stored) + counts["created"] > MAX_STORED:
            problems.append(
                f"With the {len(stored):,} cases stored, the file's {counts['created']:,} new ones would pass the "
                f"{MAX_STORED:,} an evaluation takes: delete some first."
            )
        if problems:
            raise InvalidRoutingCase(problems)
        if not dry_run:
            for case in to_save:
                case.save()
    return counts


def read_cases(text: str, *, file_format: str) -> tuple[list[tuple[str, dict]], list[str]]:
    """([(where, the case's fields)], problems) of a file: each line's own problems (its shape, its text). Reading
    stops past MAX_STORED lines (no file can bring more cases than may be stored) or at the MAX_PROBLEMS-th problem: a
    file of garbage costs no more than a full one."""
    if file_format not in FILE_FORMATS:
        return [], [f"The format is {file_format!r}; it is one of {', '.join(FILE_FORMATS)}."]
    rows = _json_lines(text) if file_format == "jsonl" else _csv_rows(text)
    entries, problems = [], []
    for count, (where, row) in enumerate(rows, 1):
        if count > MAX_STORED:
            return [], [f"The file holds more than {MAX_STORED:,} cases, which an import takes at most."]
        if len(problems) >= MAX_PROBLEMS:
            problems.append(f"Reading stopped at {where}, after {MAX_PROBLEMS} problems.")
            break
        if isinstance(row, str):
            problems.append(f"{where}: {row}")
            continue
        unknown = sorted(_shown(name) for name in set(row) - set(FIELDS))
        wrong = [name for name, value in row.items() if name in FIELDS and not isinstance(value, str)]
        unstorable = [name for name, value in row.items() if name in FIELDS and isinstance(value, str) and unstorable_text(value)]
        missing = [name for name in ("utterance", "expected") if name not in row]
        line_problems = [
            *(f"{name}: not a field of a case (utterance, currentMode, expected)." for name in unknown),
            *(f"{name}: must be text." for name in wrong),
            *(f"{name}: holds a character no database can store." for name in unstorable),
            *(f"{name}: every case needs one." for name in missing),
        ]
        problems += [f"{where}: {problem}" for problem in line_problems]
        if not line_problems:
            entries.append((where, {FIELDS[name]: value for name, value in row.items()}))
    if not entries and not problems:
        problems.append("The file holds no case.")
    return entries, problems


def _shown(name: str) -> str:
    """A name from the file, escaped if a page or a terminal could not print it."""
    return ascii(name) if unstorable_text(name) else name


def _json_lines(text: str):
    # Lines end at "\n" only: str.splitlines() also splits at U+2028, "\x85" or "\f", which a JSON string may hold.
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line, object_pairs_hook=refuse_duplicate_keys)
        except (ValueError, RecursionError) as error:
            problem = json_problem(error, subject="the line") or getattr(error, "msg", error)
            yield f"line {number}", f"not JSON: {problem}."
            continue
        yield f"line {number}", row if isinstance(row, dict) else "must be one JSON object."


def _csv_rows(text: str):
    # Whatever the line endings (a file saved on an old Mac ends lines in "\r"), as the command's reading makes them.
    reader = csv.DictReader(io.StringIO(text.replace("\r\n", "\n").replace("\r", "\n")))
    try:
        columns = reader.fieldnames or []
        header = [
            *(f"{_shown(name)}: not a column of a case (utterance, currentMode, expected)."
              for name in columns if name not in FIELDS),
            *(f"{_shown(name)}: named twice." for name in sorted({name for name in columns if columns.count(name) > 1})),
            *(f"{name}: every case needs this column." for name in ("utterance", "expected") if name not in columns),
        ]
        if header:
            yield "the header", " ".join(header)
            return
        for row in reader:
            if None in row:
                yield f"line {reader.line_num}", "has more values than the header has columns."
            else:
                yield f"line {reader.line_num}", {name: value for name, value in row.items() if value is not None}
    except csv.Error as error:  # the csv reader's own count: DictReader's is the last row's
        yield f"line {reader.reader.line_num}", f"not CSV: {error}."
