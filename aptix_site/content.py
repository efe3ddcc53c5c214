"""The parser and the content negotiation that DRF's settings name. Apart from aptix_site.api: DRF imports them while
rest_framework.views is still loading, so this module must not import views."""

import codecs

from django.http import Http404
from rest_framework import exceptions
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import JSONParser, get_encoding
from rest_framework.utils import json

from .text import check_nesting, json_problem, refuse_duplicate_keys, unstorable_text


class StrictJSONParser(JSONParser):
    """JSON bodies whose text can be stored (no NUL, no lone surrogate), nested at most MAX_JSON_NESTING levels deep,
    and that give no key twice."""

    def parse(self, stream, media_type=None, parser_context=None):
        # JSONParser.parse, with the duplicate-key hook, the text checked, and plainer words for two failures.
        decoded = codecs.getreader(get_encoding(parser_context or {}))(stream)
        parse_constant = json.strict_constant if self.strict else None
        try:
            data = json.load(decoded, parse_constant=parse_constant, object_pairs_hook=refuse_duplicate_keys)
            check_nesting(data)
            problem = unstorable_text(data)
        except (RecursionError, ValueError) as error:
            plain = json_problem(error, subject="the body")
            raise exceptions.ParseError(f"JSON parse error - {f'{plain}.' if plain else error}") from None
        if problem:
            raise exceptions.ParseError(f"Text in the request body must not contain {problem}.")
        return data


class FallbackContentNegotiation(DefaultContentNegotiation):
    """An Accept (or ?format=) naming no media type a view offers gets its first one, not a 406: each speaks one."""

    def select_renderer(self, request, renderers, format_suffix=None):
        try:
            return super().select_renderer(request, renderers, format_suffix)
        except (exceptions.NotAcceptable, Http404):
            return renderers[0], renderers[0].media_type
