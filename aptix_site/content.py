"""
How the API reads request bodies and picks the media type of its answers: the parser and the content negotiation
that DRF's settings name.

Kept apart from aptix_site.api: DRF imports these classes while rest_framework.views is still loading, so this
module must not import views.
"""

import codecs

from django.http import Http404
from rest_framework import exceptions
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import JSONParser, get_encoding
from rest_framework.utils import json

from .text import refuse_duplicate_keys, unstorable_text


class StrictJSONParser(JSONParser):
    """
    JSON bodies whose text can be stored (no NUL characters, no lone surrogates, sane nesting), and that
    say one thing: a key given twice in one object is refused rather than resolved by the last one winning.
    """

    def parse(self, stream, media_type=None, parser_context=None):
        # JSONParser.parse, with the duplicate-key hook, the text checked, and plainer words for two failures.
        decoded = codecs.getreader(get_encoding(parser_context or {}))(stream)
        parse_constant = json.strict_constant if self.strict else None
        try:
            data = json.load(decoded, parse_constant=parse_constant, object_pairs_hook=refuse_duplicate_keys)
            problem = unstorable_text(data)
        except RecursionError:
            raise exceptions.ParseError("JSON parse error - the body is nested too deeply.") from None
        except ValueError as error:
            # Python's own wording for an over-long integer ends in advice about sys.set_int_max_str_digits().
            if "int_max_str_digits" in str(error):
                raise exceptions.ParseError("JSON parse error - a number in the body has too many digits.") from None
            raise exceptions.ParseError(f"JSON parse error - {error}") from None
        if problem:
            raise exceptions.ParseError(f"Text in the request body must not contain {problem}.")
        return data


class FallbackContentNegotiation(DefaultContentNegotiation):
    """
    When a client's Accept header (or ?format=) names no media type a view offers, answer in the view's first one
    instead of 406: every endpoint here speaks one language, and the schema names it.
    """

    def select_renderer(self, request, renderers, format_suffix=None):
        try:
            return super().select_renderer(request, renderers, format_suffix)
        except (exceptions.NotAcceptable, Http404):
            return renderers[0], renderers[0].media_type
