"""
Whether JavaScript's `new RegExp(pattern)` takes a pattern, as Roo Code makes a fileRegex: read by JavaScript's own
grammar (that of a pattern without flags, with Annex B), never compiled by Python's, so that no pattern JavaScript
takes is refused. No library checks JavaScript's grammar from Python; translating to Python's `re` (or `regex`) and
compiling would refuse patterns JavaScript takes. Compared with Node 20 on 60,000 random patterns while it was written;
a test compares it with `node` when one is installed.
"""

import itertools
import re


class _JavaScriptSyntaxError(Exception):
    """What `new RegExp(pattern)` throws, in V8's words."""


def javascript_regex_problem(pattern: str) -> str | None:
    """
    Why JavaScript's `new RegExp(pattern)` (no flags, as Roo Code makes a fileRegex) throws a SyntaxError, in V8's
    words; None when JavaScript takes the pattern. Read by ECMAScript's grammar with Annex B (what browsers and Node
    take without the u flag) and this year's additions (modifiers such as (?i:...), a group name repeated in other
    alternatives), so that nothing JavaScript takes is refused: lookbehind of any length, `]`, `{` as characters...
    """
    try:
        names = _JavaScriptPattern(pattern, named_groups=False).read()
        if names:  # a pattern with a named group is read again, with \k<name> meaning its group (ECMAScript B.1.2)
            _JavaScriptPattern(pattern, named_groups=True, names=names).read()
    except _JavaScriptSyntaxError as error:
        return str(error)
    except RecursionError:  # the reading is recursive, as the grammar is
        return "Groups nested too deeply to be checked"
    return None


CLASS_ESCAPES = tuple("dDsSwW")
CONTROL_ESCAPES = {"f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B, "b": 0x08}  # \b: in a class, a backspace
OCTAL_DIGITS = tuple("01234567")
MODIFIER_FLAGS = ("i", "m", "s")


def _is_hex(text: str) -> bool:
    return bool(text) and all(character in "0123456789abcdefABCDEF" for character in text)


def _bound(digits: str) -> int:
    """A quantifier's bound as V8 reads it (a number of thousands of digits is no error: Python's int would refuse)."""
    digits = digits.lstrip("0")
    return LARGEST_BOUND if len(digits) > len(str(LARGEST_BOUND)) else min(int(digits or "0"), LARGEST_BOUND)


def _identifier_character(code_point: int, *, first: bool) -> bool:
    """Whether a group name may hold the character there: ID_Start (first) or ID_Continue, '$', and ZWNJ, ZWJ."""
    character = chr(code_point)
    if character == "$" or (not first and character in "\u200c\u200d"):
        return True
    return character.isidentifier() if first else f"a{character}".isidentifier()


BRACED_QUANTIFIER = re.compile(r"\{([0-9]+)(,([0-9]*))?\}")
# V8 reads a bound past 2^31 - 1 as that (RegExpTree::kInfinity): {3000000000,2147483648} is in order.
LARGEST_BOUND = 2**31 - 1


class _GroupsOfOneName:
    """
    Where the groups of one name are: a tree of the (disjunction, alternative) pairs around them, so that a new group of
    that name is checked in time proportional to its depth, not to the number of groups before it.
    """

    def __init__(self):
        self.ends = False  # a group of the name is here
        self.disjunctions = set()  # the disjunctions entered here on the way to a group of the name
        self.children = {}  # (disjunction, alternative) -> _GroupsOfOneName

    def clashes(self, path: tuple) -> bool:
        """Whether an earlier group of the name can match with one at path: no disjunction sets them apart."""
        node = self
        for disjunction, alternative in path:
            if node.ends or node.disjunctions - {disjunction}:  # one here, or down another disjunction: both match
                return True
            node = node.children.get((disjunction, alternative))
            if node is None:  # every earlier group took another alternative of a disjunction this one is in
                return False
        return node.ends or bool(node.disjunctions)

    def add(self, path: tuple) -> None:
        node = self
        for step in path:
            node.disjunctions.add(step[0])
            node = node.children.setdefault(step, _GroupsOfOneName())
        node.ends = True


class _JavaScriptPattern:
    """One reading of a pattern, as JavaScript reads it: over UTF-16 code units, as a pattern without the u flag is."""

    def __init__(self, pattern: str, *, named_groups: bool, names: frozenset | set = frozenset()):
        units = pattern.encode("utf-16-le", "surrogatepass")
        self.units = [chr(int.from_bytes(units[at: at + 2], "little")) for at in range(0, len(units), 2)]
        self.text = "".join(self.units)  # the code units as one string, for re and str.find
        self.at = 0
        self.named_groups = named_groups  # whether the pattern has named groups: \k is then a reference
        self.names = names
        self.groups: dict[str, _GroupsOfOneName] = {}  # by name
        self.disjunctions = itertools.count()

    def read(self) -> set[str]:
        self.disjunction(())
        if self.at < len(self.units):  # only ')' ends a disjunction before the end
            raise _JavaScriptSyntaxError("Unmatched ')'")
        return set(self.groups)

    def peek(self, offset: int = 0) -> str:
        at = self.at + offset
        return self.units[at] if at < len(self.units) else ""

    def disjunction(self, path: tuple) -> None:
        """Alternatives separated by '|'; path: the (disjunction, alternative) pairs around this one."""
        disjunction = next(self.disjunctions)
        for alternative in itertools.count():
            here = (*path, (disjunction, alternative))
            while self.peek() not in ("", "|", ")"):
                self.term(here)
            if self.peek() != "|":
                return
            self.at += 1

    def term(self, path: tuple) -> None:
        character = self.peek()
        if character in ("^", "$") or (character == "\\" and self.peek(1) in ("b", "B")):
            self.at += 1 if character != "\\" else 2
            return self.refuse_quantifier("Nothing to repeat")
        if character == "(":
            quantifiable = self.group(path)
        elif character in ("*", "+", "?"):
            raise _JavaScriptSyntaxError("Nothing to repeat")
        elif character == "{" and self.braced_quantifier() is not None:
            raise _JavaScriptSyntaxError("Nothing to repeat")
        elif character == "[":
            quantifiable = self.character_class()
        elif character == "\\":
            quantifiable = self.atom_escape()
        else:  # any other character, ']', '{' and '}' among them (Annex B), stands for itself
            self.at += 1
            quantifiable = True
        if quantifiable:
            self.quantifier()
        else:
            self.refuse_quantifier("Invalid quantifier")

    def refuse_quantifier(self, message: str) -> None:
        if self.peek() in ("*", "+", "?") or (self.peek() == "{" and self.braced_quantifier() is not None):
            raise _JavaScriptSyntaxError(message)

    def quantifier(self) -> None:
        if self.peek() in ("*", "+", "?"):
            self.at += 1
        elif self.peek() == "{" and (bounds := self.braced_quantifier()) is not None:
            low, high, end = bounds
            if high is not None and high < low:
                raise _JavaScriptSyntaxError("numbers out of order in {} quantifier")
            self.at = end
        else:
            return
        if self.peek() == "?":
            self.at += 1

    def braced_quantifier(self) -> tuple[int, int | None, int] | None:
        """({n}: n, n; {n,}: n, None; {n,m}: n, m; and where it ends) at '{', or None: then '{' is a character."""
        found = BRACED_QUANTIFIER.match(self.text, self.at)
        if found is None:
            return None
        low = _bound(found.group(1))
        high = low if found.group(2) is None else _bound(found.group(3)) if found.group(3) else None
        return low, high, found.end()

    def group(self, path: tuple) -> bool:
        """A group at '('; whether a quantifier may follow it (not a lookbehind's)."""
        self.at += 1
        quantifiable = True
        if self.peek() == "?":
            self.at += 1
            kind = self.peek()
            if kind in (":", "=", "!"):  # Annex B lets a lookahead be quantified
                self.at += 1
            elif kind == "<" and self.peek(1) in ("=", "!"):
                self.at += 2
                quantifiable = False
            elif kind == "<":
                self.at += 1
                self.named_group(self.group_name("Invalid capture group name"), path)
            else:
                self.modifiers()
        self.disjunction(path)
        if self.peek() != ")":
            raise _JavaScriptSyntaxError("Unterminated group")
        self.at += 1
        return quantifiable

    def named_group(self, name: str, path: tuple) -> None:
        """A name may be given twice only in alternatives of which one match takes one (ES2025)."""
        groups = self.groups.setdefault(name, _GroupsOfOneName())
        if groups.clashes(path):
            raise _JavaScriptSyntaxError("Duplicate capture group name")
        groups.add(path)

    def modifiers(self) -> None:
        """(?ims-ims: ...), ES2025's modifiers; nothing else may follow '(?'."""
        added = self.flags()
        removed = None
        if self.peek() == "-":
            self.at += 1
            removed = self.flags()
        if self.peek() != ":" or (removed is not None and not added and not removed):
            raise _JavaScriptSyntaxError("Invalid group")
        if len(set(added + (removed or ""))) != len(added + (removed or "")):
            raise _JavaScriptSyntaxError("Repeated flag in modifiers")
        self.at += 1

    def flags(self) -> str:
        flags = ""
        while self.peek() in MODIFIER_FLAGS:
            flags += self.peek()
            self.at += 1
        return flags

    def group_name(self, message: str) -> str:
        """A group's name, after '<', up to and past '>'."""
        code_points = []
        while self.peek() != ">":
            if not self.peek():
                raise _JavaScriptSyntaxError(message)
            code_point = self.name_code_point(message)
            if not _identifier_character(code_point, first=not code_points):
                raise _JavaScriptSyntaxError(message)
            code_points.append(code_point)
        if not code_points:
            raise _JavaScriptSyntaxError(message)
        self.at += 1
        return "".join(map(chr, code_points))

    def name_code_point(self, message: str) -> int:
        """One character of a name, itself or as \\uXXXX or \\u{X...}; a surrogate pair as the one it stands for."""
        code_point = self.name_unit(message)
        if 0xD800 <= code_point <= 0xDBFF:
            start = self.at
            try:
                trail = self.name_unit(message) if self.peek() else None
            except _JavaScriptSyntaxError:
                trail = None
            if trail is not None and 0xDC00 <= trail <= 0xDFFF:
                return 0x10000 + ((code_point - 0xD800) << 10) + (trail - 0xDC00)
            self.at = start
        return code_point

    def name_unit(self, message: str) -> int:
        if self.peek() != "\\":
            self.at += 1
            return ord(self.units[self.at - 1])
        if self.peek(1) != "u":
            raise _JavaScriptSyntaxError(message)
        self.at += 2
        if self.peek() == "{":
            end = self.text.find("}", self.at)
            digits = "".join(self.units[self.at + 1: end])
            if end < 0 or not _is_hex(digits) or int(digits, 16) > 0x10FFFF:
                raise _JavaScriptSyntaxError(message)
            self.at = end + 1
            return int(digits, 16)
        digits = "".join(self.units[self.at: self.at + 4])
        if len(digits) != 4 or not _is_hex(digits):
            raise _JavaScriptSyntaxError(message)
        self.at += 4
        return int(digits, 16)

    def atom_escape(self) -> bool:
        """An escape at '\\', outside a class: whatever follows stands for itself unless it means more (Annex B)."""
        escaped = self.peek(1)
        if not escaped:
            raise _JavaScriptSyntaxError("\\ at end of pattern")
        if escaped == "c" and not re.fullmatch("[A-Za-z]", self.peek(2)):
            self.at += 1  # a backslash that stands for itself; the c is read next
        elif escaped == "c":
            self.at += 3
        elif escaped == "k" and self.named_groups:
            self.at += 2
            if self.peek() != "<":
                raise _JavaScriptSyntaxError("Invalid named reference")
            self.at += 1
            if self.group_name("Invalid named reference") not in self.names:
                raise _JavaScriptSyntaxError("Invalid named capture referenced")
        else:
            # \d, \w, \x41, \u0041, \1 (a back reference, or an octal escape when there is no such group), \p, \/:
            # none of them can be wrong without the u flag, and what follows them is read as characters.
            self.at += 2
        return True

    def character_class(self) -> bool:
        """[...] at '[': its ranges must not be out of order; [] and [^] are classes too."""
        self.at += 1
        if self.peek() == "^":
            self.at += 1
        while self.peek() != "]":
            if not self.peek():
                raise _JavaScriptSyntaxError("Unterminated character class")
            low = self.class_atom()
            if self.peek() == "-" and self.peek(1) not in ("", "]"):
                self.at += 1
                high = self.class_atom()
                # A range with a class such as \d at either end is those characters and '-' (Annex B).
                if low is not None and high is not None and low > high:
                    raise _JavaScriptSyntaxError("Range out of order in character class")
        self.at += 1
        return True

    def class_atom(self) -> int | None:
        """The code unit one member of a class stands for; None for \\d, \\s, \\w and the others."""
        character = self.peek()
        if character != "\\":
            self.at += 1
            return ord(character)
        escaped = self.peek(1)
        if not escaped:
            raise _JavaScriptSyntaxError("\\ at end of pattern")
        if escaped in CLASS_ESCAPES:
            self.at += 2
            return None
        if escaped == "c":
            if re.fullmatch("[A-Za-z0-9_]", self.peek(2)):  # Annex B takes digits and '_' in a class
                self.at += 3
                return ord(self.units[self.at - 1]) % 32
            self.at += 1  # a backslash that stands for itself
            return ord("\\")
        if escaped == "k" and self.named_groups:
            raise _JavaScriptSyntaxError("Invalid escape")
        if escaped in OCTAL_DIGITS:
            return self.octal_escape()
        self.at += 2
        for letter, length in (("x", 2), ("u", 4)):
            digits = "".join(self.units[self.at: self.at + length])
            if escaped == letter and len(digits) == length and _is_hex(digits):
                self.at += length
                return int(digits, 16)
        return CONTROL_ESCAPES.get(escaped, ord(escaped))

    def octal_escape(self) -> int:
        """\\0 to \\377 (Annex B's legacy octal escapes), at '\\'."""
        self.at += 1
        digits = self.peek()
        self.at += 1
        for _ in range(2 if digits in "0123" else 1):
            if self.peek() not in OCTAL_DIGITS:
                break
            digits += self.peek()
            self.at += 1
        return int(digits, 8)
