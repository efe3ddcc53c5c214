"""The fileRegex check: every pattern JavaScript takes is taken, every one it refuses refused in its words."""

import json
import shutil
import subprocess

import pytest

from modes.coding_agents.javascript_regex import javascript_regex_problem


@pytest.mark.parametrize("pattern", [
    "(?<!draft)\\.(md|mdx)$", "(?<=(^|/)docs/(api|guides)/).*\\.md$", "^(?=.*locales/).*\\.json$",
    "(?<name>[a-z]+)\\.\\k<name>", "\\k<not-a-reference>", "[^]", "[]", "\\/", "a]b}c{", "x{,3}", "x{2,", "\\c",
    "[\\c_]", "\\8\\9", "\\1(a)", "[\\1-\\7]", "\\p{L}", "(?=a)*", "\\u{41}", "(?<$dollar>x)", "(?<\\u0061>x)\\k<a>",
    "(?<a>x)|(?<a>y)", "((?<a>x)|(?<a>y))|(?<a>z)", "(?<a>x)|((?<a>y)|(?<a>z))", "a{3000000000,2147483648}",
    "(?i:readme)\\.md$", "(?i-s:x)", "😀+", "", "\\.(md|ya?ml)$", "^src/.*\\.(ts|tsx)$",
])
def test_file_regexes_javascript_takes_are_never_refused(pattern):
    assert javascript_regex_problem(pattern) is None


FILE_REGEX_REFUSALS = [
    ("(", "Unterminated group"), (")", "Unmatched ')'"), ("[a-", "Unterminated character class"),
    ("*.md", "Nothing to repeat"), ("a**", "Nothing to repeat"), ("{2}", "Nothing to repeat"),
    ("x{1}{2}", "Nothing to repeat"), ("^*", "Nothing to repeat"), ("(?<=a)+", "Invalid quantifier"),
    ("a{3,1}", "numbers out of order in {} quantifier"), ("[z-a]", "Range out of order in character class"),
    ("[😀-😎]", "Range out of order in character class"), ("md\\", "\\ at end of pattern"),
    ("(?P<name>x)", "Invalid group"), ("(?i)x", "Invalid group"), ("(?<1st>x)", "Invalid capture group name"),
    ("(?<a>x)(?<a>y)", "Duplicate capture group name"), ("(?<a>x)\\k<b>", "Invalid named capture referenced"),
    ("(?<a>x)\\k", "Invalid named reference"), ("(?<a>x)[\\k<a>]", "Invalid escape"),
    ("((?<a>x)|(?<a>y))(?<a>z)", "Duplicate capture group name"),
    ("(?<a>x)|((?<a>y)(?<a>z))", "Duplicate capture group name"),
    ("a{" + "9" * 5000 + ",1}", "numbers out of order in {} quantifier"),
]


@pytest.mark.parametrize("pattern, message", FILE_REGEX_REFUSALS)
def test_file_regexes_javascript_refuses_are_refused_in_its_words(pattern, message):
    assert javascript_regex_problem(pattern) == message


NODE_PATTERNS = [
    "(?<!draft)\\.(md|mdx)$", "(?<=a+)b", "(?<=(?<n>a))\\k<n>", "[\\b-\\a]", "[\\d-z]", "[z-\\d]", "[\\08-\\07]",
    "[\\x41-\\x40]", "[\\u0042-\\u0041]", "[\\cA-\\cB]", "[\\c1]", "[\\c]", "\\c1", "\\x4{2}", "\\u{2,1}",
    "(?<a😀>x)", "(?<😀>x)", "(?<a\\u{62}>x)\\k<ab>", "(?<a>x)\\k<a", "a{99999999999999999999}", "a{2,1}?",
    "(?:)", "()", "(?=)", "(?!)+", "a|*", "a|", "|", "[^-]", "[-]", "[a-]", "[\\-a]", "\\k", "\\k<", "a{", "a{1",
    "a{1,", "a{1,2", "{", "}", "]", "?", "+a", "a+?+", "(?<a>.)(?<b>.)\\k<b>\\k<a>", "[\\k]", "\\B*", "\\b?",
    "$+", "(?<=x)?", "(?<!x){2}", "(?#comment)", "(?>atomic)", "a++", "[[:alpha:]]", "\\Qa\\E", "\\z", "\\Z",
]


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js to ask JavaScript itself")
def test_the_regex_check_agrees_with_javascript_itself():
    script = "const ps = JSON.parse(require('fs').readFileSync(0, 'utf8'));" \
             "console.log(JSON.stringify(ps.map(p => { try { new RegExp(p); return null } catch (e) { return 1 } })))"
    patterns = NODE_PATTERNS + [pattern for pattern, _ in FILE_REGEX_REFUSALS]
    run = subprocess.run(["node", "-e", script], input=json.dumps(patterns), capture_output=True, text=True, timeout=60)
    refused_by_javascript = [verdict is not None for verdict in json.loads(run.stdout)]
    assert [javascript_regex_problem(pattern) is not None for pattern in patterns] == refused_by_javascript
