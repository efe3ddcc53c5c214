"""The portable file's reading of YAML and JSON (modes.portable.load_text)."""

import pytest

from modes.portable import PortableFileError, load_text


@pytest.mark.parametrize("text, document", [
    ("key:\tvalue", {"key": "value"}),
    ("a: x\ty", {"a": "x\ty"}),
    ("a: x \t y", {"a": "x \t y"}),
    ("a: b\t", {"a": "b"}),
    ("a: b\t# a comment", {"a": "b"}),
    ('a: "x"\t# a comment', {"a": "x"}),
    ("a: x\t\n  y", {"a": "x y"}),
    ("- \titem", ["item"]),
    ("key: [a,\tb]", {"key": ["a", "b"]}),
    ("a: |\n  \tx\n", {"a": "\tx\n"}),
])
def test_a_tab_between_the_words_of_a_line_is_read_as_yaml_reads_it(text, document):
    assert load_text(text) == document


@pytest.mark.parametrize("text", ["\ta: b", "a:\n\tb: c"])
def test_a_tab_that_indents_is_refused_as_yaml_refuses_it(text):
    with pytest.raises(PortableFileError):
        load_text(text)


@pytest.mark.parametrize("text", ["-\tkey: value\n  other: value", "- \tkey: value", "-\t- item", "a:\n  -\tb: c"])
def test_a_tab_before_a_mapping_or_list_on_a_list_entrys_line_is_refused_as_yaml_refuses_it(text):
    # The tab indents the mapping or list that starts after it; Roo Code's yaml package, js-yaml and YAML refuse it.
    with pytest.raises(PortableFileError, match="a tab that indents"):
        load_text(text)


@pytest.mark.parametrize("text, document", [
    ("a: 1\n\t\nb: 2", {"a": 1, "b": 2}),
    ("a: 1\n  \t\nb: 2\n\t", {"a": 1, "b": 2}),
    ("a: 1\n\t# a comment\nb: 2", {"a": 1, "b": 2}),
    ("customModes:\n\t\n  - slug: x\n\t# a comment\n  - slug: y", {"customModes": [{"slug": "x"}, {"slug": "y"}]}),
    ("a: [x,\n\t\n  y]", {"a": ["x", "y"]}),
])
def test_a_line_holding_only_tabs_or_a_comment_after_them_is_read_as_yaml_reads_it(text, document):
    assert load_text(text) == document


@pytest.mark.parametrize("text", ["a: |\n  x\n\t\nb: 1", "a: >\n  x\n\t# a comment\nb: 1"])
def test_a_tab_on_the_blank_lines_that_end_a_block_scalar_is_refused_as_roo_codes_yaml_refuses_it(text):
    with pytest.raises(PortableFileError):
        load_text(text)
