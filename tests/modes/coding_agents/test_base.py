"""What every format shares: the one-line when-to-use sentence made of a format's text, and how the report says it."""

from modes.coding_agents.base import WHEN_TO_USE_LENGTH, when_to_use


def test_a_sentence_that_fits_is_carried_whole():
    assert when_to_use("Use it for docs.") == ("Use it for docs.", None, None)


def test_a_text_over_lines_is_joined_and_a_trailing_newline_only_trimmed():
    assert when_to_use("Use it\nfor docs.")[2] == "joined onto one line"
    assert when_to_use("Use it for docs.\n") == ("Use it for docs.", None, "its leading, trailing or doubled spaces left out")


def test_a_long_text_gives_its_first_sentence_and_the_whole_text_for_the_description():
    text = "Use it for docs. " + "More words here. " * 30
    sentence, whole, how = when_to_use(text)
    assert (sentence, whole) == ("Use it for docs.", text)
    assert how == f"longer than {WHEN_TO_USE_LENGTH} characters: its first sentence is the when-to-use, the whole " \
                  "text the description"


def test_a_long_text_without_a_short_sentence_is_cut_between_words_and_says_so():
    text = "Use it for " + "documentation " * 40
    sentence, whole, how = when_to_use(text)
    assert len(sentence) <= WHEN_TO_USE_LENGTH and sentence.endswith("documentation…") and whole == text
    assert "its first words are the when-to-use, cut with '…'" in how
